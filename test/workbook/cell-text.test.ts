// A workbook cell as the text a user sees: the values ExcelJS's reader gives, one by one.
import { describe, expect, it } from 'vitest';
import { cellText } from '../../src/workbook/cell-text.js';

describe('cellText', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    ['02134', '02134'],
    ['=1+2 Ltd', '=1+2 Ltd'],
    [42, '42'],
    [-5, '-5'],
    [0.1 + 0.2, '0.3'],
    [1234.5, '1234.5'],
    [0.000123, '0.000123'],
    [1 / 3, '0.333333333333333'],
    [123456789012345680000, '123456789012346000000'],
    [true, 'TRUE'],
    [false, 'FALSE'],
    [new Date(Date.UTC(2024, 2, 5)), '2024-03-05'],
    [new Date(Date.UTC(2024, 2, 5, 14, 30, 0)), '2024-03-05T14:30:00'],
    [new Date(Date.UTC(2024, 2, 5, 14, 30, 0, 250)), '2024-03-05T14:30:00.250'],
    [{ formula: '0.1+0.2', result: 0.30000000000000004 }, '0.3'],
    [{ formula: 'A1&"x"', result: '0012x' }, '0012x'],
    [{ sharedFormula: 'B2', result: true }, 'TRUE'],
    [{ formula: '1/0', result: { error: '#DIV/0!' } }, '#DIV/0!'],
    [{ formula: 'NOW()' }, ''],
    [{ richText: [{ text: 'Acme ' }, { text: 'Shoes', font: { bold: true } }] }, 'Acme Shoes'],
    [{ text: 'acme-shoes.com', hyperlink: 'https://acme-shoes.com' }, 'acme-shoes.com'],
    [{ error: '#N/A' }, '#N/A'],
  ])('%j reads as %j', (value, text) => {
    expect(cellText(value as never)).toBe(text);
  });
});
