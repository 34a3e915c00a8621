// The crash-safe record of what a batch already paid for, and its dedup store. An append-only
// NDJSON file: a header line naming the run, then one line per domain. Memory holds a Map from
// domain to the byte offset of its line, and the bytes of the lines not yet on disk; a result is
// read back (from those bytes or the file) when needed, so a million rows do not mean a million
// results in memory.
//
// Durability: each answer is written to the file as it is appended (one write(2)), so a kill -9
// loses at most the answers of the requests still in flight; the file is fsynced at least every
// second and on flush()/close(), for a crash of the machine. A line torn by a kill is cut off on
// the next open.
import { constants, writeSync } from 'node:fs';
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
  /**
   * The first time this run meets a domain: the copy of it the journal keeps (ownCopy), to be
   * used from then on; undefined every later time (a duplicate row). Kept in the journal's Map
   * rather than a Set of its own, so a million rows hold each domain and its entry once.
   */
  firstSeen(domain: string): string | undefined;
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

/** firstSeen() for a run without a journal (stdin to stdout): a Set of the domains met. */
export function seenDomains(): Pick<Journal, 'firstSeen'> {
  const seen = new Set<string>();
  return {
    firstSeen(domain) {
      if (seen.has(domain)) return undefined;
      const own = ownCopy(domain);
      seen.add(own);
      return own;
    },
  };
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
const INITIAL_PENDING_BYTES = 64 << 10;
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
    // Paid data: readable by its owner only.
    file = await open(path, options.fresh ? 'w+' : constants.O_RDWR | constants.O_CREAT, 0o600);
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

/**
 * A domain's value in the journal's Map: where its latest line starts, and whether this run has met
 * it (firstSeen). n >= 0: a line at n, not met yet; SEEN: met, no line; n <= -2: a line at -2 - n,
 * met. Small integers, as the offsets alone were: no object per domain.
 */
const SEEN = -1;
const seenAt = (offset: number): number => -2 - offset;
const offsetOf = (value: number): number => (value >= 0 ? value : -2 - value);

class FileJournal implements Journal {
  /**
   * Lines appended and not yet handed to the disk, as bytes outside V8's heap (not a result object
   * and a line string per domain). Each line's file offset is in `offsets` from its append, so
   * the Map alone answers has(), size and firstSeen(); a result is read back from these bytes
   * until they are written.
   */
  private pending = Buffer.allocUnsafe(INITIAL_PENDING_BYTES);
  private pendingBytes = 0;
  /** Where `pending` will start in the file: its end once every write so far has landed. */
  private pendingStart: number;
  /** The bytes being written, and where they go: still read from here until they are written. */
  private writing: { bytes: Buffer; start: number } | undefined;
  /** Domains met by this run that have no line (yet): in `offsets` as SEEN. */
  private seenOnly = 0;
  private flushing: Promise<void> = Promise.resolve();
  /** Written through since the last fsync. */
  private unsynced = false;
  /** A write-through failed: lines wait for flush(), which reports the failure. */
  private writeFailed = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly path: string,
    private readonly file: FileHandle,
    private readonly offsets: Map<string, number>,
    end: number,
    intervalMs: number,
    private readonly options: Pick<JournalOptions, 'onWriteFailure'> = {},
  ) {
    this.pendingStart = end;
    this.timer = setInterval(() => {
      if (this.pendingBytes > 0 || this.unsynced) this.flush().catch(() => {});
    }, intervalMs);
    // A pending flush must not keep a finished process alive; close() flushes the rest.
    this.timer.unref();
  }

  get size(): number {
    return this.offsets.size - this.seenOnly;
  }

  has(domain: string): boolean {
    const value = this.offsets.get(domain);
    return value !== undefined && value !== SEEN;
  }

  firstSeen(domain: string): string | undefined {
    const value = this.offsets.get(domain);
    if (value !== undefined && value < 0) return undefined;
    const own = ownCopy(domain);
    if (value === undefined) {
      this.offsets.set(own, SEEN);
      this.seenOnly++;
    } else this.offsets.set(own, seenAt(value));
    return own;
  }

  async get(domain: string): Promise<RowResult | undefined> {
    const value = this.offsets.get(domain);
    if (value === undefined || value === SEEN) return undefined;
    const offset = offsetOf(value);
    if (offset >= this.pendingStart)
      return entryIn(this.pending, offset - this.pendingStart, this.path, offset).r;
    const writing = this.writing;
    if (writing && offset >= writing.start)
      return entryIn(writing.bytes, offset - writing.start, this.path, offset).r;
    return (await this.readEntry(offset)).r;
  }

  append(domain: string, result: RowResult): Promise<void> | undefined {
    try {
      this.assertUsable();
    } catch (error) {
      return Promise.reject(error);
    }
    const line = `${JSON.stringify({ d: domain, r: result })}\n`;
    const length = Buffer.byteLength(line);
    if (this.pendingBytes + length > this.pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.pending.length * 2, this.pendingBytes + length));
      this.pending.copy(grown, 0, 0, this.pendingBytes);
      this.pending = grown;
    }
    this.pending.write(line, this.pendingBytes);
    // A domain appended again: its latest line is the one read back (and the one a scan keeps).
    const offset = this.pendingStart + this.pendingBytes;
    const previous = this.offsets.get(domain);
    if (previous === SEEN) this.seenOnly--;
    this.offsets.set(domain, previous !== undefined && previous < 0 ? seenAt(offset) : offset);
    this.pendingBytes += length;
    this.writeThrough();
    // No promise per result: a batch appends hundreds of thousands.
    return this.pendingBytes >= MAX_PENDING_BYTES ? this.flush() : undefined;
  }

  /**
   * Hands what is pending to the file at once, with one write(2): an answer is then on the
   * file before its row counts as done, and a kill -9 loses at most the answers still in
   * flight; the timer fsyncs at least every second, for a crash of the machine. While an
   * asynchronous flush is under way, or after a write failed, lines wait for the next flush,
   * which writes them in order from where the file ends.
   */
  private writeThrough(): void {
    if (this.writing || this.writeFailed) return;
    const bytes = this.pending.subarray(0, this.pendingBytes);
    try {
      let written = 0;
      while (written < bytes.length)
        written += writeSync(
          this.file.fd,
          bytes,
          written,
          bytes.length - written,
          this.pendingStart + written,
        );
    } catch (error) {
      // A torn part is written over by the next flush, from pendingStart.
      this.writeFailed = true;
      this.options.onWriteFailure?.(error);
      return;
    }
    this.pendingStart += bytes.length;
    this.pendingBytes = 0;
    this.unsynced = true;
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
    if (this.pendingBytes === 0) {
      if (this.unsynced) {
        this.unsynced = false;
        await this.file.datasync().catch((error) => {
          this.options.onWriteFailure?.(error);
          throw ioProblem(this.path, error);
        });
      }
      return;
    }
    const bytes = this.pending.subarray(0, this.pendingBytes);
    const start = this.pendingStart;
    this.writing = { bytes, start };
    this.pendingStart = start + bytes.length;
    this.pending = Buffer.allocUnsafe(Math.min(this.pending.length, MAX_PENDING_BYTES));
    this.pendingBytes = 0;
    try {
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await this.file.write(
          bytes,
          written,
          bytes.length - written,
          start + written,
        );
        written += bytesWritten;
      }
      await this.file.datasync();
      this.unsynced = false;
    } catch (error) {
      // Back in front of what was appended since: the next flush writes it all from `start`
      // again, over any torn part, and every offset handed out stays true.
      const since = this.pending.subarray(0, this.pendingBytes);
      const merged = Buffer.allocUnsafe(Math.max(bytes.length + since.length, this.pending.length));
      bytes.copy(merged, 0);
      since.copy(merged, bytes.length);
      this.pending = merged;
      this.pendingBytes = bytes.length + since.length;
      this.pendingStart = start;
      this.writing = undefined;
      this.options.onWriteFailure?.(error);
      throw ioProblem(this.path, error);
    }
    this.writing = undefined;
    this.writeFailed = false;
  }

  private async readEntry(offset: number): Promise<Entry> {
    let length = READ_GUESS;
    for (;;) {
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await this.file.read(buffer, 0, length, offset);
      const bytes = buffer.subarray(0, bytesRead);
      if (bytesRead < length || bytes.includes(NEWLINE)) return entryIn(bytes, 0, this.path, offset);
      length *= 4;
    }
  }
}

/** The entry on the line that starts at `at` in `bytes` (at `offset` in the file). */
function entryIn(bytes: Buffer, at: number, path: string, offset: number): Entry {
  const newline = bytes.indexOf(NEWLINE, at);
  const value = newline === -1 ? undefined : parseLine(bytes.toString('utf8', at, newline));
  if (isEntry(value)) return value;
  throw new Problem({ code: 'internal_bug', detail: `the journal ${path} has no entry at byte ${offset}` });
}
