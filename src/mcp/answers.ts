// What a tool call returns: a text block a model reads and the same data as structuredContent,
// kept within MAX_ANSWER_CHARS; and the tool error every failure becomes (the problem's code,
// title, detail and remedy), never a protocol error.
import { isProblem, Problem } from '../problem.js';
import { keepWhole, keptUri } from './kept.js';

/** The most characters an answer's text (and its structured content) may take. */
export const MAX_ANSWER_CHARS = 100_000;
/** Room kept for the summary line above the JSON of the text block. */
const SUMMARY_ROOM = 2_000;

export type Json = Record<string, unknown>;

/** A link to a whole answer kept for the session (src/mcp/kept.ts). */
export interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType: string;
  description: string;
}

export interface ToolResult {
  [member: string]: unknown;
  content: Array<{ type: 'text'; text: string } | ResourceLink>;
  structuredContent?: Json;
  isError?: boolean;
}

/** A successful answer: the summary, then the structured content as compact JSON. */
export function answer(summary: string, structured: Json): ToolResult {
  return {
    content: [{ type: 'text', text: `${summary}\n${JSON.stringify(structured)}` }],
    structuredContent: structured,
  };
}

export interface Fitted<T> {
  /** The rows kept, first first: whole rows only. */
  rows: T[];
  /** How many rows were left out to stay within the cap. */
  omitted: number;
}

/**
 * The most leading rows whose answer, as `build` makes it, stays within the cap once serialised.
 * Each row's size is measured once; the answer is then built and checked as a whole.
 */
export function fitRows<T>(
  rows: readonly T[],
  build: (rows: T[], omitted: number) => Json,
  limit = MAX_ANSWER_CHARS - SUMMARY_ROOM,
): Fitted<T> {
  const whole = JSON.stringify(build([...rows], 0)).length;
  if (whole <= limit) return { rows: [...rows], omitted: 0 };
  // The whole answer is kept for the session before the cut one is measured: it names it.
  keepWhole(() => build([...rows], 0));
  // The envelope without rows (with the note saying how many are left out), then row by row.
  let used = JSON.stringify(build([], rows.length)).length;
  let count = 0;
  for (const row of rows) {
    const size = JSON.stringify(row).length + 1;
    if (used + size > limit) break;
    used += size;
    count++;
  }
  while (count > 0 && JSON.stringify(build(rows.slice(0, count), rows.length - count)).length > limit) {
    count--;
  }
  return { rows: rows.slice(0, count), omitted: rows.length - count };
}

/** What an answer cut at the cap says about the rows left out, and how to get them. */
export function truncation(shown: number, omitted: number, how: string): Json | undefined {
  if (omitted === 0) return undefined;
  const uri = keptUri();
  const kept = uri
    ? ` The whole answer is kept for this session as the resource ${uri} (resources/read), at no cost.`
    : '';
  return {
    rows_shown: shown,
    rows_omitted: omitted,
    how_to_get_more: `The answer is capped at ${MAX_ANSWER_CHARS.toLocaleString('en-US')} characters: ${how}${kept}`,
    ...(uri ? { resource_uri: uri } : {}),
  };
}

/**
 * What an answer stopped before its end says: why (the problem's code, or `cancelled` for a stop
 * asked for: the client's cancel, the end of the session) and what was not done. What was bought
 * before the stop is in the answer, with its cost.
 */
export function incompleteOf(problem: Problem | undefined, notDone: readonly string[]): Json {
  return {
    reason: problem?.code ?? 'cancelled',
    detail: problem ? inToolTerms(problem.detail) : 'the call was stopped (cancelled, or the session ended)',
    not_done: [...notDone],
  };
}

/** Keeps only `fields` (and `domain`, which names the row) of each row, in that order. */
export function project(
  rows: readonly Json[],
  fields: readonly string[] | undefined,
  keep: string[] = [],
): Json[] {
  if (!fields) return [...rows];
  const wanted = [...new Set(['domain', ...keep, ...fields])];
  return rows.map((row) => Object.fromEntries(wanted.filter((f) => f in row).map((f) => [f, row[f]])));
}

/** Any failure as a Problem: a thrown non-problem is a bug, said as one. */
export function asProblem(error: unknown): Problem {
  if (isProblem(error)) return error;
  return new Problem({
    code: 'internal_bug',
    title: 'Unexpected failure',
    detail: error instanceof Error ? error.message : String(error),
    source: 'client',
    cause: error,
  });
}

/** The command line's words in a problem, as a tool's caller knows them: its arguments and tools. */
const TOOL_TERMS: ReadonlyArray<[RegExp, string]> = [
  [/--exclude-domain\b/g, 'exclude_domains'],
  [/--filters?\b/g, 'filters'],
  [/--(products|include|limit|evidence|since|by)\b/g, '$1'],
  [/`company-data (products|fields)[^`]*`/g, 'the $1 tool'],
  [/`company-data me`/g, 'the account tool'],
];

export function inToolTerms(text: string): string {
  return TOOL_TERMS.reduce((said, [words, replacement]) => said.replace(words, replacement), text);
}

/**
 * A tool error: the text names the problem, what it means and what to do; the structured content
 * carries the stable code (and `extra`, such as what the caps leave). The detail and the remedy
 * name the tools' arguments where a command's would name its options.
 */
export function problemResult(problem: Problem, extra: Json = {}, advice?: string): ToolResult {
  const remedy = inToolTerms(advice ?? problem.hint);
  const detail = inToolTerms(problem.detail);
  const lines = [`${problem.title} (${problem.code})${detail ? `: ${detail}` : ''}`];
  if (remedy) lines.push(`What to do: ${remedy}`);
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: {
      error: {
        code: problem.code,
        title: problem.title,
        detail,
        remedy,
        status: problem.status,
        retryable: problem.retryable,
      },
      ...extra,
    },
  };
}

/** Arguments that do not match a tool's input schema, as a problem naming each mistake. */
export function invalidArguments(
  tool: string,
  error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> },
): Problem {
  const issues = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'arguments';
    return `${where}: ${issue.message}`;
  });
  return new Problem({
    code: 'usage_error',
    title: 'Invalid arguments',
    detail: `${tool}: ${issues.join('; ')}`,
    source: 'client',
    hint: `Fix the arguments to match the input schema of ${tool} (tools/list) and call again.`,
  });
}
