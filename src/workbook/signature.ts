// What a batch input is, from its first bytes: text (a CSV or a list of domains), an .xlsx
// workbook, or a spreadsheet format the tool does not read. Without this, a workbook's bytes
// were sniffed as text: an .xlsx passed for UTF-16, a flat .fods for a list of domains.
import { Problem } from '../problem.js';

export type InputKind = { kind: 'text' } | { kind: 'xlsx' } | { kind: 'refused'; what: string };

/** Enough of a file to see a ZIP's first entry names or an XML document's root element. */
export const SIGNATURE_BYTES = 4096;

const CFB = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function startsWith(head: Uint8Array, bytes: number[]): boolean {
  return bytes.every((byte, i) => head[i] === byte);
}

/** The ZIP-based formats, told apart by the entry names that ZIP keeps as plain text. */
function zipKind(text: string, name: string | undefined): InputKind {
  if (text.includes('application/vnd.oasis.opendocument.spreadsheet'))
    return { kind: 'refused', what: 'an OpenDocument spreadsheet (.ods)' };
  if (text.includes('application/vnd.oasis.opendocument'))
    return { kind: 'refused', what: 'an OpenDocument document' };
  if (text.includes('xl/workbook.bin')) return { kind: 'refused', what: 'an Excel binary workbook (.xlsb)' };
  if (text.includes('Index/Document.iwa') || text.includes('Index/Metadata.iwa'))
    return { kind: 'refused', what: 'an Apple Numbers document' };
  if (text.includes('xl/')) return { kind: 'xlsx' };
  if (text.includes('word/')) return { kind: 'refused', what: 'a Word document' };
  if (text.includes('ppt/')) return { kind: 'refused', what: 'a PowerPoint presentation' };
  // An .xlsx whose first entries are not yet under xl/ (its content types and relations first).
  if (text.includes('[Content_Types].xml') && /\.xls[xm]$/i.test(name ?? '')) return { kind: 'xlsx' };
  return { kind: 'refused', what: 'a ZIP archive' };
}

/**
 * Whether the first bytes already tell the kind: a text input is known from its first bytes (it
 * starts neither as a ZIP, an OLE2 file nor an XML document), so a stdin that is still being
 * written is read as it comes instead of waiting for SIGNATURE_BYTES of it.
 */
export function kindIsClear(head: Uint8Array): boolean {
  if (head.length >= SIGNATURE_BYTES) return true;
  if (head.length < CFB.length) return false;
  const text = Buffer.from(head.buffer, head.byteOffset, head.length).toString('latin1');
  if (text.startsWith('PK') || startsWith(head, CFB)) return false;
  const xml = text.replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  return xml !== '' && !xml.startsWith('<');
}

/** `name`: the file's name, when it has one (an .xlsx whose first entries say nothing). */
export function inputKindOf(head: Uint8Array, name?: string): InputKind {
  if (startsWith(head, CFB))
    return { kind: 'refused', what: 'a legacy Excel workbook (.xls) or another OLE2 document' };
  const text = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, SIGNATURE_BYTES)).toString(
    'latin1',
  );
  if (text.startsWith('PK\x03\x04') || text.startsWith('PK\x05\x06')) return zipKind(text, name);
  const xml = text.replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  if (xml.startsWith('<')) {
    if (xml.includes('office:document') && xml.includes('opendocument.spreadsheet'))
      return { kind: 'refused', what: 'a flat OpenDocument spreadsheet (.fods)' };
    if (xml.includes('urn:schemas-microsoft-com:office:spreadsheet'))
      return { kind: 'refused', what: 'an Excel 2003 XML spreadsheet' };
  }
  return { kind: 'text' };
}

/** Exit 2, naming what the file is and the two formats that are read. */
export function refusedWorkbook(name: string, what: string): Problem {
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot read the input',
    detail: `${name} is ${what}, which company-data does not read`,
    hint: 'Open it in your spreadsheet program and save it as CSV or as an Excel workbook (.xlsx), then pass that file to --input.',
    source: 'client',
  });
}
