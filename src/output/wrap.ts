// Text a person reads, fitted to the terminal's width at word boundaries (issue 46): help
// epilogues, notices, errors and hints. A word is never broken; one longer than the width stays
// whole on a line of its own (a path, a URL), as `fmt` and Commander's own help do.

/** Display width, close enough for ASCII and most Latin text (colour codes do not count). */
function width(text: string): number {
  return [...text.replace(/\x1b\[[0-9;]*m/g, '')].length;
}

/**
 * One line broken at spaces into lines of at most `columns`. The continuation lines take the
 * line's own indentation plus `hang` more spaces, so a wrapped hint stays under its message.
 */
export function wrapLine(line: string, columns: number, hang = 0): string[] {
  if (width(line) <= columns) return [line];
  const indent = /^ */.exec(line)?.[0] ?? '';
  return pack(
    unbreakable(line.slice(indent.length).split(/ +/)),
    indent,
    indent + ' '.repeat(hang),
    columns,
    '',
  );
}

/**
 * Words joined where a break would spoil a copy: a `quoted command` stays one piece, and so does a
 * command given bare after a colon (from `company-data` to the end of the line, as "Resume with:
 * company-data enrich ..."): a terminal wraps a line too long by itself, and copying it gives one
 * line back, where a line broken here would paste as two commands. "company-data" in prose is a
 * word like the others.
 */
function unbreakable(words: string[]): string[] {
  const out: string[] = [];
  let open: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (open !== undefined) {
      open += ` ${word}`;
      if (word.includes('`')) {
        out.push(open);
        open = undefined;
      }
    } else if (word === 'company-data' && (i === 0 || words[i - 1].endsWith(':'))) {
      out.push(words.slice(i).join(' '));
      return out;
    } else if ((word.match(/`/g) ?? []).length === 1) open = word;
    else out.push(word);
  }
  if (open !== undefined) out.push(open);
  return out;
}

/** Words laid into lines: `first` starts the first line, `next` the rest; `suffix` ends all but the last. */
function pack(words: string[], first: string, next: string, columns: number, suffix: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of words) {
    if (word === '') continue;
    if (empty) {
      line += word;
      empty = false;
    } else if (width(line) + 1 + width(word) + width(suffix) <= columns) line += ` ${word}`;
    else {
      lines.push(line + suffix);
      line = next + word;
    }
  }
  lines.push(line);
  return lines;
}

/** Every line of a message wrapped (see wrapLine). */
export function wrapText(text: string, columns: number, hang = 0): string {
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, columns, hang))
    .join('\n');
}

/**
 * A shell command line (an example's `  $ company-data ...`) broken where the shell splits words,
 * never inside quotes, continued with ` \` on an indented line: what is copied still runs.
 */
export function wrapCommandLine(line: string, columns: number): string[] {
  if (width(line) <= columns) return [line];
  const indent = /^ */.exec(line)?.[0] ?? '';
  const prompt = line.startsWith(`${indent}$ `) ? '$ ' : '';
  const words = shellWords(line.slice(indent.length + prompt.length));
  return pack(words, indent + prompt, `${indent}${' '.repeat(prompt.length)}    `, columns, ' \\');
}

/** The words of a command line as the shell splits them: spaces inside quotes do not split. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') {
        word += c + (text[i + 1] ?? '');
        i++;
        continue;
      }
      word += c;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') {
      word += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === ' ') {
      if (word) words.push(word);
      word = '';
    } else word += c;
  }
  if (word) words.push(word);
  return words;
}

/**
 * The text a command adds after its options (addHelpText), fitted to `columns`. Prose paragraphs
 * (lines that start in the first column) are joined and filled again, so a narrower terminal gets
 * even lines rather than a long line and a short one. Indented lines are laid out by hand
 * (examples, a configuration snippet): each keeps its own line; a command line too wide is
 * continued with ` \`, anything else continues under its own indentation.
 */
export function reflowHelpText(text: string, columns: number): string {
  const out: string[] = [];
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) out.push(...pack(prose.join(' ').split(/ +/), '', '', columns, ''));
    prose = [];
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') {
      flush();
      out.push(line);
    } else if (/^\s/.test(line)) {
      flush();
      // A line continued by hand (`... \` and its indented rest) is one command line.
      let whole = line;
      while (whole.endsWith('\\') && i + 1 < lines.length && /^\s/.test(lines[i + 1]))
        whole = `${whole.slice(0, -1).trimEnd()} ${lines[++i].trim()}`;
      out.push(...(/^\s*\$ /.test(whole) ? wrapCommandLine(whole, columns) : wrapLine(whole, columns, 2)));
    } else if (/:$/.test(line) && i + 1 < lines.length && /^\s/.test(lines[i + 1])) {
      // A heading over indented lines ("Examples:") stands alone.
      flush();
      out.push(line);
    } else prose.push(line.trim());
  }
  flush();
  return out.join('\n');
}
