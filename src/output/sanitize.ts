// Server-provided text is untrusted: strip escape sequences and control characters before it
// reaches a terminal (src/text.ts, re-exported here), and neutralise CSV cells a spreadsheet would
// run as a formula.

export { oneLine, stripControl } from '../text.js';

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A cell starting with = + - @ tab or CR is run as a formula by spreadsheets (CSV injection).
 * Prefixing a single quote makes it text. Plain numbers such as -12 or +3.5 are left alone.
 */
export function neutraliseFormula(cell: string): string {
  if (cell === '') return cell;
  // The first character first: every cell of a batch passes here, and most start otherwise.
  const first = cell[0];
  if (first !== '=' && first !== '+' && first !== '-' && first !== '@' && first !== '\t' && first !== '\r')
    return cell;
  return NUMERIC.test(cell) ? cell : `'${cell}`;
}
