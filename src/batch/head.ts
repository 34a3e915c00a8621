// --head N: a trial run on the first N data rows, and what it would cost, said before anything
// is bought. The N rows are read first (a trial is small; they are held in memory), so the note
// can count the distinct domains and those the store already answers.
import type { InputReader, InputRow } from '../csv/input.js';
import { normaliseDomain } from '../domain.js';
import { plural } from '../text.js';

/** The reader's first `head` rows; the rest of the input is not read. */
export async function firstRows(reader: InputReader, head: number): Promise<InputRow[]> {
  const rows: InputRow[] = [];
  if (head <= 0) return rows;
  if (Symbol.iterator in reader.rows) {
    for (const row of reader.rows) {
      rows.push(row);
      if (rows.length >= head) break;
    }
    return rows;
  }
  for await (const row of reader.rows) {
    rows.push(row);
    if (rows.length >= head) break;
  }
  return rows;
}

/** `--head 20: 20 rows, 18 distinct domains, 5 answered by the store; at most 26 credits for the other 13.` */
export async function headNote(
  head: number,
  rows: InputRow[],
  isStored: (domain: string) => Promise<boolean> | boolean,
  worstCase: number,
): Promise<string> {
  const domains = new Set<string>();
  for (const row of rows) {
    if (row.error) continue;
    const normalised = normaliseDomain(row.domainRaw);
    if (normalised.ok) domains.add(normalised.domain);
  }
  let stored = 0;
  for (const domain of domains) if (await isStored(domain)) stored++;
  const toBuy = domains.size - stored;
  return (
    `--head ${head}: ${plural(rows.length, 'row')}, ${plural(domains.size, 'distinct domain')}, ` +
    `${stored} answered by the store; at most ${plural(toBuy * worstCase, 'credit')} for the other ${toBuy} ` +
    `(${worstCase} each at most).`
  );
}
