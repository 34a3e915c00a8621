// The chaos harness's input side (test/soak/lib.ts runs it): a seeded CSV of messy rows that
// name a set of domains, and the readers the checks use on input and output.
import { writeFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { normaliseDomain } from '../../src/domain.js';
import { mulberry32 } from '../../src/sandbox/dataset.js';

export interface SoakInput {
  rows: number;
  /** Distinct normalised domains the input names (valid ones only). */
  distinct: number;
  /** Rows whose domain cell is not a domain at all (final `invalid_domain`, so the batch exits 6). */
  invalid: number;
}

const NAME_STYLES = [
  (i: number) => `Company ${i}`,
  (i: number) => `"Quoted" & Co, ${i}`,
  (i: number) => `Line one ${i}\nline two`,
  (i: number) => `Müller ${i} Söhne`,
  (i: number) => `=SUM(A${i})`,
];

/**
 * Writes a CSV of `rows` rows naming `distinct` domains: a share of them from the dataset (found,
 * charged), the rest `.example` domains (not found, free). Every distinct domain appears at least
 * once; the other rows repeat them in URL, upper-case or padded forms that normalise to the same
 * domain, so deduplication across spellings is part of the run. Cells hold commas, quotes,
 * newlines, non-ASCII text and formula-like text, which must come back untouched.
 */
export function writeSoakInput(
  path: string,
  options: { rows: number; distinct: number; found: readonly string[]; seed: number },
): SoakInput {
  const random = mulberry32(options.seed);
  const foundCount = Math.min(options.found.length, Math.floor(options.distinct * 0.7));
  const pool = [
    ...options.found.slice(0, foundCount),
    ...Array.from({ length: options.distinct - foundCount }, (_, i) => `absent-${i}.example`),
  ];
  const picks: number[] = pool.map((_, i) => i);
  while (picks.length < options.rows) picks.push(Math.floor(random() * random() * pool.length));
  for (let i = picks.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [picks[i], picks[j]] = [picks[j], picks[i]];
  }
  const uses = new Uint32Array(pool.length);
  for (const p of picks) uses[p]++;
  let invalid = 0;
  const lines = ['id,name,website,note'];
  for (let i = 0; i < picks.length; i++) {
    const domain = pool[picks[i]];
    const form = random();
    let cell = domain;
    if (form < 0.15) cell = `https://www.${domain}/about?ref=${i}`;
    else if (form < 0.25) cell = domain.toUpperCase();
    else if (form < 0.3) cell = `  ${domain} `;
    else if (form < 0.302 && uses[picks[i]] > 1) {
      // Only a duplicate may become invalid, so every distinct domain is still asked for.
      uses[picks[i]]--;
      cell = 'not a domain';
      invalid++;
    }
    const name = NAME_STYLES[Math.floor(random() * NAME_STYLES.length)](i);
    lines.push([String(i), name, cell, random() < 0.5 ? '' : `note ${i}`].map(csvCell).join(','));
  }
  writeFileSync(path, `${lines.join('\r\n')}\r\n`);
  return { rows: picks.length, distinct: pool.length, invalid };
}

function csvCell(value: string): string {
  return /[",\r\n ]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** Records of a CSV file (header first), parsed independently of the tool's reader. */
export function parseCsv(bytes: Buffer | string): string[][] {
  return parse(bytes, { bom: true, relax_column_count: true }) as string[][];
}

/** The normalised domain of each data row's `website` cell, or null for an invalid one. */
export function rowDomains(input: string[][]): Array<string | null> {
  const column = input[0].indexOf('website');
  return input.slice(1).map((row) => {
    const result = normaliseDomain(row[column]);
    return result.ok ? result.domain : null;
  });
}

/** What each domain cost when bought: its first row's credits_charged in a complete output. */
export function costsFrom(input: string[][], output: string[][]): Map<string, number> {
  const charged = output[0].indexOf('credits_charged');
  const costs = new Map<string, number>();
  rowDomains(input).forEach((domain, i) => {
    if (domain !== null && !costs.has(domain)) costs.set(domain, Number(output[i + 1][charged]));
  });
  return costs;
}
