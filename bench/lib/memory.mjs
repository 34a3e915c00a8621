// Memory: peak RSS of `enrich --input` over a large file where half the rows repeat a domain, and
// how it grows from a tenth of that size. The sandbox holds only 10,000 companies,
// so most lookups answer found: false (cheap for the sandbox, and a full result for the client:
// stored, deduplicated and written like any other).
import { join } from 'node:path';
import { enrichRun } from './batch.mjs';
import { duplicateOf, mixedDomains, writeCsv } from './data.mjs';

/** A CSV of `rows` rows over rows/2 unique domains, each named twice (data.mjs, duplicateOf). */
export async function duplicatedInput({ rows, known, scratch }) {
  const unique = rows / 2;
  const domains = mixedDomains(known, Math.min(unique, Math.floor((known.length * 4) / 3)));
  const domainOf = (k) => (k < domains.length ? domains[k] : `nf-${k}-bench.example`);
  return writeCsv(join(scratch, `memory-${rows}.csv`), 'id,domain,note', rows, (i) => {
    return `${i + 1},${domainOf(duplicateOf(i, rows))},row ${i + 1}`;
  });
}

export async function peakRss({ sandbox, input, rows, concurrency, scratch }) {
  const run = await enrichRun({ sandbox, input, rows, concurrency, scratch, tag: `memory-${rows}` });
  return {
    rows,
    peakRssMb: run.peakRssMb,
    seconds: run.seconds,
    source: run.source,
    storeBytes: run.storeBytes,
  };
}
