// The crash-safe record of what a batch already paid for, and its dedup store. An append-only
// NDJSON file: a header line naming the run, then one line per domain. Memory holds a Map from
// domain to the byte offset of its line plus the few results not yet on disk; a result is read
// back from the file when needed, so a million rows do not mean a million results in memory.
//
// Durability: appends are buffered and written + fsynced at least every second, when enough
// piles up, and on flush()/close(). A kill -9 loses at most the last second, and a line torn by
// it is cut off on the next open, so a re-run pays again only for that second.
import { constants } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { Problem, usageError } from '../problem.js';
import {
  assertTornHeaderAtMost,
  type Entry,
  headerLine,
  ioProblem,
  isEntry,
  NEWLINE,
  parseLine,
  scan,
  syncDirectory,
} from './journal-file.js';
import type { RowResult } from './output.js';

export interface Journal {
  readonly path: string;
  /** Domains with a stored result. */
  readonly size: number;
  has(domain: string): boolean;
  get(domain: string): Promise<RowResult | undefined>;
  /** Buffers the result; a promise only when much is waiting for the disk (backpressure). */
  append(domain: string, result: RowResult): Promise<void> | undefined;
  /** Writes and fsyncs everything appended so far. */
  flush(): Promise<void>;
  /** Flushes and closes; the file stays for the next run. */
  close(): Promise<void>;
  /** Closes and deletes the file (after a complete run). */
  remove(): Promise<void>;
}

/**
 * A copy of a domain that holds nothing else alive. A domain cut from a CSV row is a slice of the
 * chunk it was read from, and V8 keeps the whole chunk for as long as the slice lives: a batch that
 * keeps a million of them (the journal's keys, the domains seen) would keep the whole file.
 */
export function ownCopy(domain: string): string {
  return Buffer.from(domain, 'latin1').toString('latin1');
}

export interface JournalOptions {
  /** Start a new journal even if one exists (its results are discarded). */
  fresh?: boolean;
  /** How often buffered appends reach the disk. Default 1000 ms. */
  flushIntervalMs?: number;
  /**
   * Called with each failed write (a full disk, say). Nothing appended is dropped: the next flush
   * writes it again at the same place, so a run can stop buying and keep what it bought.
   */
  onWriteFailure?: (error: unknown) => void;
}

const FLUSH_INTERVAL_MS = 1000;
// Past this many buffered bytes, append() waits for a flush: memory stays bounded even when a
// caller appends in a tight loop.
const MAX_PENDING_BYTES = 4 << 20;
const READ_GUESS = 4096;

export async function openJournal(
  path: string,
  fingerprint: string,
  options: JournalOptions = {},
): Promise<Journal> {
  let file: FileHandle;
  let offsets = new Map<string, number>();
  let end: number;
  try {
    file = await open(path, options.fresh ? 'w+' : constants.O_RDWR | constants.O_CREAT);
  } catch (error) {
    throw ioProblem(path, error);
  }
  try {
    const found = options.fresh ? undefined : await scan(file, path);
    if (found?.fingerprint !== undefined && found.fingerprint !== fingerprint) {
      throw usageError(
        `the journal ${path} belongs to another run (a different input, output or options)`,
        'Re-run with --fresh to start a new journal (its results are discarded), or pass --journal <path> to keep it.',
      );
    }
    if (found?.fingerprint !== undefined) {
      offsets = found.offsets;
      end = found.validEnd;
      // Cut a line torn by a crash, so the next append starts on a line of its own.
      const { size } = await file.stat();
      if (size > end) {
        await file.truncate(end);
        await file.sync();
      }
    } else {
      // New, empty, or only a torn header: (re)start the file. Anything else is someone's file.
      await assertTornHeaderAtMost(file, path);
      const header = Buffer.from(headerLine(fingerprint));
      await file.truncate(0);
      await file.write(header, 0, header.length, 0);
      await file.sync();
      await syncDirectory(path);
      end = header.length;
    }
  } catch (error) {
    await file.close();
    throw error instanceof Problem ? error : ioProblem(path, error);
  }
  return new FileJournal(path, file, offsets, end, options.flushIntervalMs ?? FLUSH_INTERVAL_MS, options);
}

class FileJournal implements Journal {
  private pending = new Map<string, { result: RowResult; line: string }>();
  private pendingBytes = 0;
  /** The batch being written: still answered from memory until its offsets are known. */
  private writing = new Map<string, { result: RowResult; line: string }>();
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly path: string,
    private readonly file: FileHandle,
    private readonly offsets: Map<string, number>,
    private end: number,
    intervalMs: number,
    private readonly options: Pick<JournalOptions, 'onWriteFailure'> = {},
  ) {
    this.timer = setInterval(() => {
      if (this.pending.size > 0) this.flush().catch(() => {});
    }, intervalMs);
    // A pending flush must not keep a finished process alive; close() flushes the rest.
    this.timer.unref();
  }

  get size(): number {
    let size = this.offsets.size;
    for (const domain of this.pending.keys())
      if (!this.offsets.has(domain) && !this.writing.has(domain)) size++;
    for (const domain of this.writing.keys()) if (!this.offsets.has(domain)) size++;
    return size;
  }

  has(domain: string): boolean {
    return this.pending.has(domain) || this.writing.has(domain) || this.offsets.has(domain);
  }

  async get(domain: string): Promise<RowResult | undefined> {
    const buffered = this.pending.get(domain) ?? this.writing.get(domain);
    if (buffered) return buffered.result;
    const offset = this.offsets.get(domain);
    if (offset === undefined) return undefined;
    return (await this.readEntry(offset)).r;
  }

  append(domain: string, result: RowResult): Promise<void> | undefined {
    try {
      this.assertUsable();
    } catch (error) {
      return Promise.reject(error);
    }
    const line = `${JSON.stringify({ d: domain, r: result })}\n`;
    const previous = this.pending.get(domain);
    if (previous) this.pendingBytes -= previous.line.length;
    this.pending.set(domain, { result, line });
    this.pendingBytes += line.length;
    // No promise per result: a batch appends hundreds of thousands.
    return this.pendingBytes >= MAX_PENDING_BYTES ? this.flush() : undefined;
  }

  flush(): Promise<void> {
    // Flushes run one after another, so lines land in append order and offsets stay exact.
    this.flushing = this.flushing.then(() => this.writePending());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.file.close();
    }
  }

  async remove(): Promise<void> {
    clearInterval(this.timer);
    if (!this.closed) {
      this.closed = true;
      await this.flushing.catch(() => {});
      await this.file.close();
    }
    await rm(this.path, { force: true });
  }

  private assertUsable(): void {
    if (this.closed)
      throw new Problem({ code: 'internal_bug', detail: `the journal ${this.path} is closed` });
  }

  private async writePending(): Promise<void> {
    this.assertUsable();
    if (this.pending.size === 0) return;
    this.writing = this.pending;
    this.pending = new Map();
    this.pendingBytes = 0;
    const lines: string[] = [];
    const starts = new Map<string, number>();
    let position = this.end;
    for (const [domain, { line }] of this.writing) {
      starts.set(domain, position);
      lines.push(line);
      position += Buffer.byteLength(line);
    }
    const bytes = Buffer.from(lines.join(''));
    try {
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await this.file.write(
          bytes,
          written,
          bytes.length - written,
          this.end + written,
        );
        written += bytesWritten;
      }
      await this.file.datasync();
    } catch (error) {
      // Back to pending, first: the next flush writes it all from `end` again, over any torn part.
      this.pending = new Map([...this.writing, ...this.pending]);
      this.pendingBytes = 0;
      for (const { line } of this.pending.values()) this.pendingBytes += line.length;
      this.writing = new Map();
      this.options.onWriteFailure?.(error);
      throw ioProblem(this.path, error);
    }
    this.end = position;
    for (const [domain, start] of starts) this.offsets.set(domain, start);
    this.writing = new Map();
  }

  private async readEntry(offset: number): Promise<Entry> {
    let length = READ_GUESS;
    for (;;) {
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await this.file.read(buffer, 0, length, offset);
      const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
      if (newline !== -1) {
        const value = parseLine(buffer.toString('utf8', 0, newline));
        if (isEntry(value)) return value;
        break;
      }
      if (bytesRead < length) break;
      length *= 4;
    }
    throw new Problem({
      code: 'internal_bug',
      detail: `the journal ${this.path} has no entry at byte ${offset}`,
    });
  }
}
