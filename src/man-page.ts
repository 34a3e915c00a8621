// company-data(1), written from the same declarations as --help (issue 46): scripts/build.mjs calls
// renderManPage(buildProgram()) and writes dist/company-data.1, which package.json's `man` installs
// with the package. Each command's section is its usage, description, options and the text it
// adds after them; the environment comes from src/environment.ts.
import type { Command, Option } from 'commander';
import { ENVIRONMENT } from './environment.js';

/** The exit codes of DESIGN.md's table, as the README gives them. */
const EXIT_STATUS: Array<[string, string]> = [
  ['0', 'success, including found: false'],
  ['1', 'unexpected failure (a bug)'],
  ['2', 'usage or input error: bad flags, unreadable input, a 400/413/415/422 problem'],
  ['3', 'key or permission'],
  ['4', 'credits: insufficient credits, max_credits_exceeded, or a budget reached'],
  ['5', 'temporarily unavailable after the retries'],
  ['6', 'a batch finished but some rows carry an error'],
  ['7', 'another run holds the same batch or the store'],
  ['8', 'an output, stdout or the store could not be written'],
  ['130', 'interrupted'],
];

/** Text made safe for roff: backslashes, a leading dot or quote, and hyphens of options. */
function roff(text: string): string {
  return text
    .replaceAll('\\', '\\e')
    .replaceAll('-', '\\-')
    .replace(/^([.'])/gm, '\\&$1');
}

/** The command's words below the program: "config set-key". */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** What a command adds after its options, as printed (Commander calls these on --help). */
function afterText(command: Command): string {
  let text = '';
  const emitter = command as unknown as import('node:events').EventEmitter;
  emitter.emit('afterHelp', { error: false, command, write: (s: string) => (text += s) });
  return text.replace(/^\n+/, '').replace(/\n+$/, '');
}

/** Prose paragraphs filled by man; indented lines (examples) kept as they are. */
function body(text: string): string[] {
  const out: string[] = [];
  let verbatim = false;
  const endVerbatim = () => {
    if (verbatim) out.push('.RE', '.fi');
    verbatim = false;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      endVerbatim();
      out.push('.PP');
    } else if (/^\s/.test(line)) {
      if (!verbatim) out.push('.nf', '.RS 2');
      verbatim = true;
      out.push(roff(line.trim()));
    } else {
      endVerbatim();
      out.push(roff(line));
    }
  }
  endVerbatim();
  return out;
}

function options(list: readonly Option[]): string[] {
  return list.flatMap((option) => [
    '.TP',
    `.B ${roff(option.flags)}`,
    roff(option.description + choicesOf(option)),
  ]);
}

function choicesOf(option: Option): string {
  const choices = (option as Option & { argChoices?: string[] }).argChoices;
  return choices?.length ? ` (${choices.join(', ')})` : '';
}

function commandSection(command: Command): string[] {
  const path = pathOf(command);
  const usage = `company-data ${path} ${command.usage()}`.trim();
  const out = [
    '.SS',
    `.B ${roff(path)}`,
    '',
    `.PP`,
    `\\fB${roff(usage)}\\fR`,
    '.PP',
    roff(command.description()),
  ];
  const own = command.options.filter((o) => o.long !== '--help');
  if (own.length > 0) out.push('.PP', 'Options:', '.RS 2', ...options(own), '.RE');
  const after = afterText(command);
  if (after) out.push('.PP', ...body(after));
  for (const sub of command.commands) out.push(...commandSection(sub));
  return out.filter((line) => line !== '');
}

export function renderManPage(program: Command, version: string): string {
  const lines = [
    `.TH COMPANY-DATA 1 "" "company-data ${version}" "User Commands"`,
    '.SH NAME',
    `company\\-data \\- ${roff(program.description())}`,
    '.SH SYNOPSIS',
    '.B company\\-data',
    '[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]',
    '.SH DESCRIPTION',
    'Every command prints its own help with \\fB\\-\\-help\\fR, the same text as in this page.',
    'Data goes to stdout (a table on a terminal, JSON otherwise); messages go to stderr.',
    '.SH GLOBAL OPTIONS',
    ...options(program.options.filter((o) => o.long !== '--help')),
    '.SH COMMANDS',
    ...program.commands.filter((c) => c.name() !== 'help').flatMap(commandSection),
    '.SH ENVIRONMENT',
    ...ENVIRONMENT.flatMap((group) => [
      '.SS',
      roff(group.title),
      ...group.variables.flatMap((v) => ['.TP', `.B ${roff(v.name)}`, roff(v.sets)]),
    ]),
    '.SH EXIT STATUS',
    ...EXIT_STATUS.flatMap(([code, meaning]) => ['.TP', `.B ${code}`, roff(meaning)]),
    '.SH FILES',
    '.TP',
    '.I $XDG_CONFIG_HOME/company\\-data/config.json',
    'settings and profiles (mode 0600)',
    '.TP',
    '.I $XDG_STATE_HOME/company\\-data/store.db',
    'the result store and the spend ledger',
    '.SH SEE ALSO',
    '\\fBcompany\\-data help environment\\fR, \\fBcompany\\-data doctor\\fR',
    '',
  ];
  return lines.join('\n');
}
