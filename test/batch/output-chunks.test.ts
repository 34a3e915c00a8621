// With chunkChars the writer gathers rows into larger writes; what reaches the output must be
// byte for byte what the row-by-row writer produces, and gathered rows must not stay behind.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BatchFormat, createBatchWriter, type RowResult } from '../../src/batch/output.js';

class Sink extends Writable {
  text = '';
  writes = 0;
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += chunk.toString('utf8');
    this.writes++;
    callback();
  }
}

const RESULT: RowResult = {
  found: true,
  record: { company_name: 'Acme, "Shoes"' },
  credits_charged: 1,
  bought_at: null,
  error_code: null,
  error_detail: null,
};

async function render(format: BatchFormat, cells: string[][], chunkChars: number) {
  const out = new Sink();
  const writer = createBatchWriter({
    out,
    format,
    inputHeader: ['domain'],
    resultFields: ['company_name'],
    chunkChars,
  });
  for (const row of cells) await writer.write({ cells: row, result: RESULT });
  await writer.end();
  return out;
}

describe('createBatchWriter: gathered writes', () => {
  it('writes the same bytes as one write per row, in fewer writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<BatchFormat>('csv', 'json', 'ndjson'),
        fc.array(fc.tuple(fc.string({ maxLength: 20 })), { maxLength: 60 }),
        fc.integer({ min: 1, max: 300 }),
        async (format, rows, chunkChars) => {
          const single = await render(format, rows, 0);
          const gathered = await render(format, rows, chunkChars);
          expect(gathered.text).toBe(single.text);
          expect(gathered.writes).toBeLessThanOrEqual(single.writes);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('hands gathered rows to the output on flush() without waiting for the chunk to fill', async () => {
    const out = new Sink();
    const writer = createBatchWriter({
      out,
      format: 'ndjson',
      inputHeader: ['domain'],
      resultFields: [],
      chunkChars: 1 << 16,
    });
    await writer.write({ cells: ['a.com'], result: RESULT });
    expect(out.text).toBe('');
    await writer.flush();
    expect(out.text).toContain('"domain":"a.com"');
  });

  it('sends gathered rows on its own when no more arrive', async () => {
    const out = new Sink();
    const writer = createBatchWriter({
      out,
      format: 'csv',
      inputHeader: ['domain'],
      resultFields: [],
      chunkChars: 1 << 16,
    });
    await writer.write({ cells: ['a.com'], result: RESULT });
    await new Promise<void>((resolve) => {
      const check = () => (out.text.includes('a.com') ? resolve() : setTimeout(check, 20));
      check();
    });
    expect(out.writes).toBe(1);
  });
});
