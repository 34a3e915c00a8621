// Server-provided text is untrusted: strip escape sequences and control characters before it
// reaches a terminal, and neutralise CSV cells a spreadsheet would run as a formula.

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

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A cell starting with = + - @ tab or CR is run as a formula by spreadsheets (CSV injection).
 * Prefixing a single quote makes it text. Plain numbers such as -12 or +3.5 are left alone.
 */
export function neutraliseFormula(cell: string): string {
  if (cell === '' || NUMERIC.test(cell)) return cell;
  const first = cell[0];
  if (first === '=' || first === '+' || first === '-' || first === '@' || first === '\t' || first === '\r') {
    return `'${cell}`;
  }
  return cell;
}
