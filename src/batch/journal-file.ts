// The journal's file format: a header line naming the run, then one NDJSON line per domain.
// Reading an existing file back (scan) and the checks that keep us from overwriting other files.
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Problem, usageError } from '../problem.js';
import { isWriteFailure, writeProblem } from '../write-failures.js';
import type { RowResult } from './output.js';

const VERSION = 1;
const SCAN_CHUNK = 1 << 20;
export const NEWLINE = 0x0a;

export interface Entry {
  d: string;
  r: RowResult;
}

export function headerLine(fingerprint: string): string {
  return `${JSON.stringify({ journal: VERSION, fingerprint })}\n`;
}

export function parseLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isEntry(value: unknown): value is Entry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Partial<Entry>;
  return typeof entry.d === 'string' && typeof entry.r === 'object' && entry.r !== null;
}

export function ioProblem(path: string, error: unknown): Problem {
  // A full disk, a quota, an I/O error: exit 8 with the cause (a wrong path stays an input error).
  if (isWriteFailure(error)) return writeProblem(error, path);
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot use the journal',
    detail: `${path}: ${code}`,
    cause: error,
  });
}

export async function syncDirectory(path: string): Promise<void> {
  // A new file survives a power cut only once its directory entry is on disk too.
  const dir = await open(dirname(path), constants.O_RDONLY).catch(() => undefined);
  if (!dir) return;
  await dir.sync().catch(() => {});
  await dir.close();
}

export interface Scan {
  /** Domain -> where its latest line starts. */
  offsets: Map<string, number>;
  /** Bytes of complete lines; anything after is a torn write. */
  validEnd: number;
  fingerprint: string | undefined;
}

/** Reads an existing journal line by line, remembering where each domain's latest line starts. */
export async function scan(file: FileHandle, path: string): Promise<Scan> {
  const offsets = new Map<string, number>();
  let fingerprint: string | undefined;
  let carry = Buffer.alloc(0);
  let carryStart = 0;
  let position = 0;
  let validEnd = 0;
  let first = true;
  for (;;) {
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    const { bytesRead } = await file.read(chunk, 0, SCAN_CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const buffer =
      carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let lineStart = 0;
    for (
      let newline = buffer.indexOf(NEWLINE);
      newline !== -1;
      newline = buffer.indexOf(NEWLINE, lineStart)
    ) {
      const value = parseLine(buffer.toString('utf8', lineStart, newline));
      const offset = carryStart + lineStart;
      if (first) {
        first = false;
        const header = value as { journal?: unknown; fingerprint?: unknown } | undefined;
        if (header?.journal !== VERSION || typeof header.fingerprint !== 'string') {
          throw usageError(
            `${path} is not a company-data journal`,
            'Pass --journal <path> to keep the journal elsewhere.',
          );
        }
        fingerprint = header.fingerprint;
      } else if (isEntry(value)) {
        offsets.set(value.d, offset);
      }
      // A complete line that is not an entry (damaged on disk) is skipped, not fatal: the rows
      // it stood for are simply looked up again.
      validEnd = carryStart + newline + 1;
      lineStart = newline + 1;
    }
    carry = Buffer.from(buffer.subarray(lineStart));
    carryStart += lineStart;
  }
  return { offsets, validEnd, fingerprint };
}

const HEADER_START = `{"journal":${VERSION},"fingerprint":`;

export async function assertTornHeaderAtMost(file: FileHandle, path: string): Promise<void> {
  const head = Buffer.alloc(HEADER_START.length);
  const { bytesRead } = await file.read(head, 0, head.length, 0);
  const text = head.toString('utf8', 0, bytesRead);
  if (!HEADER_START.startsWith(text)) {
    throw usageError(
      `${path} is not a company-data journal`,
      'Pass --journal <path> to keep the journal elsewhere.',
    );
  }
}
