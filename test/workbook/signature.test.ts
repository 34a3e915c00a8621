// What an input is, from its first bytes: the LibreOffice fixtures, text, and other ZIP files.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inputKindOf, kindIsClear, SIGNATURE_BYTES } from '../../src/workbook/signature.js';

const head = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/workbooks/${name}`, import.meta.url))).subarray(
    0,
    SIGNATURE_BYTES,
  );

/** A ZIP's first local file header naming `name` (what a ZIP keeps as plain text). */
function zipNaming(name: string): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(Buffer.byteLength(name), 26);
  return Buffer.concat([header, Buffer.from(name)]);
}

describe('inputKindOf', () => {
  it.each([
    ['companies.xlsx', { kind: 'xlsx' }],
    ['companies.ods', { kind: 'refused', what: 'an OpenDocument spreadsheet (.ods)' }],
    ['companies.xls', { kind: 'refused', what: 'a legacy Excel workbook (.xls) or another OLE2 document' }],
    ['companies.fods', { kind: 'refused', what: 'a flat OpenDocument spreadsheet (.fods)' }],
    ['companies.Leads.csv', { kind: 'text' }],
  ])('%s is %j', (name, kind) => {
    expect(inputKindOf(head(name), name)).toEqual(kind);
  });

  it.each([
    ['xl/workbook.bin', 'x.xlsb', { kind: 'refused', what: 'an Excel binary workbook (.xlsb)' }],
    ['Index/Document.iwa', 'x.numbers', { kind: 'refused', what: 'an Apple Numbers document' }],
    ['word/document.xml', 'x.docx', { kind: 'refused', what: 'a Word document' }],
    ['[Content_Types].xml', 'x.xlsx', { kind: 'xlsx' }],
    ['[Content_Types].xml', 'x.zip', { kind: 'refused', what: 'a ZIP archive' }],
    ['notes.txt', 'x.csv', { kind: 'refused', what: 'a ZIP archive' }],
  ])('a ZIP naming %s first, called %s, is %j', (entry, name, kind) => {
    expect(inputKindOf(zipNaming(entry), name)).toEqual(kind);
  });

  it('reads text as text: a CSV, a list of domains, UTF-16, XML that is no spreadsheet', () => {
    expect(inputKindOf(Buffer.from('domain\nacme-shoes.com\n'))).toEqual({ kind: 'text' });
    expect(inputKindOf(Buffer.from('\ufeffa;b\n', 'utf16le'))).toEqual({ kind: 'text' });
    expect(inputKindOf(Buffer.from('<?xml version="1.0"?><list/>'))).toEqual({ kind: 'text' });
    expect(inputKindOf(Buffer.alloc(0))).toEqual({ kind: 'text' });
  });

  it('knows text from its first bytes, and waits for more of what may be a workbook', () => {
    expect(kindIsClear(Buffer.from('domain\nacme'))).toBe(true);
    expect(kindIsClear(Buffer.from('\ufeff  domain,x'))).toBe(true);
    expect(kindIsClear(Buffer.from('domain'))).toBe(false);
    expect(kindIsClear(Buffer.from('PK\x03\x04abcdefgh', 'latin1'))).toBe(false);
    expect(kindIsClear(Buffer.from('  <?xml version="1.0"?>'))).toBe(false);
    expect(kindIsClear(Buffer.from('        '))).toBe(false);
    expect(kindIsClear(Buffer.alloc(SIGNATURE_BYTES, 0x50))).toBe(true);
  });
});
