// Untrusted text made safe for a terminal: every layer needs it (the HTTP layer for its problems
// and log lines, output for tables), so it lives below all of them.

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-byte ESC sequences, C1 CSI.
const ESCAPE_SEQUENCE =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;
// C0 controls except tab and newline, DEL, and C1 controls.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Removes terminal escape sequences and control characters (keeps \t and \n). */
export function stripControl(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
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
