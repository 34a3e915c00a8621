// Untrusted text made safe for a terminal: every layer needs it (the HTTP layer for its problems
// and log lines, output for tables), so it lives below all of them.

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-byte ESC sequences, and their
// C1 forms: CSI U+009B ... final, OSC U+009D ... BEL or ST (U+009C or ESC \).
const ESCAPE_SEQUENCE =
  /\x1b\[[0-?]*[ -/]*[@-~]|[\x1b][\]][^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)?|\x9d[^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;
// C0 controls except tab and newline, DEL, C1 controls (U+009B CSI, U+009D OSC, U+009C ST...),
// and the bidirectional controls that reorder what a terminal shows (U+202E RIGHT-TO-LEFT
// OVERRIDE and its kin, the isolates U+2066-U+2069, the marks U+200E, U+200F and U+061C).
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// What must not reach a terminal raw, even inside JSON: JSON.stringify escapes C0 controls but
// leaves DEL, C1 and bidirectional controls as they are. ESC is left to the writers: tables strip
// it from values and colour their own headers with it; JSON escapes it.
const TERMINAL_UNSAFE = /[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Removes terminal escape sequences and control characters (keeps \t and \n). */
export function stripControl(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
}

/**
 * Text bound for a terminal with every control but ESC written as a \\uXXXX escape: inside a JSON string
 * that is the same value (a program reading the terminal's copy gets the service's text), and the
 * terminal sees six harmless characters instead of a command. Tables and CSV cells are stripped
 * before they get here; piped output never comes here and keeps the service's text exactly.
 */
export function escapeForTerminal(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Like stripControl, and also flattens newlines and tabs to spaces (for one-line table cells). */
export function oneLine(text: string): string {
  return stripControl(text).replace(/[\t\n]+/g, ' ');
}

/**
 * "1 error", "2 errors", "1,000 entries": the one way a count and its noun are written, so no
 * message says "1 errors" or "1 credits". `many` defaults to `one` plus "s".
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  const digits = Number.isSafeInteger(n) ? String(n).replace(/\B(?=(\d{3})+$)/g, ',') : String(n);
  return `${digits} ${n === 1 ? one : many}`;
}
