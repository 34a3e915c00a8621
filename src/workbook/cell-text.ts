// A workbook cell as the text a user sees in it, so that a sheet reads as its CSV export does:
// text as typed (leading zeros kept), numbers without binary float noise, dates as ISO 8601,
// TRUE/FALSE, a formula as its last computed result. Number formats (currency, percent, padded
// zeros on a numeric cell) are not applied: the value is the cell's, as docs/workbooks.md says.
import type { CellValue } from './exceljs.js';

/** 15 significant digits: what a spreadsheet shows for 0.1+0.2, and every integer up to 10^15. */
function numberText(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return String(value);
  return String(Number(value.toPrecision(15)));
}

/** ExcelJS reads date-formatted numbers as Dates in UTC: a day, or a day and a time. */
function dateText(value: Date): string {
  if (Number.isNaN(value.getTime())) return '';
  const iso = value.toISOString();
  if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
  return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
}

export function cellText(value: CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return numberText(value);
    case 'boolean':
      return value ? 'TRUE' : 'FALSE';
    default:
      break;
  }
  if (value instanceof Date) return dateText(value);
  if ('richText' in value) return value.richText.map((part) => part.text).join('');
  if ('formula' in value || 'sharedFormula' in value) {
    const result = (value as { result?: unknown }).result;
    if (result !== null && typeof result === 'object' && 'error' in result) return String(result.error);
    return cellText(result as CellValue | undefined);
  }
  if ('error' in value) return String(value.error);
  if ('text' in value) return cellText(value.text as CellValue);
  return '';
}
