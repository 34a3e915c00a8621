// ExcelJS, in one module. The build bundles it apart, into dist/exceljs.cjs (scripts/build.mjs),
// which the CLI bundle requires only when a workbook is read or written: every other command (and
// `--help`) would otherwise load and compile its 1 MB. Import it with `await import()`.
import ExcelJS from 'exceljs';

export const { stream } = ExcelJS;
export type { Cell, CellValue, Row } from 'exceljs';
