// Reading a batch's journal from the outside, as the end-to-end tests check what it kept.
import { existsSync, readFileSync } from 'node:fs';

/** Domains in a journal file (a torn last line is ignored, as the journal itself does). */
export function journalled(path: string): Set<string> {
  if (!existsSync(path)) return new Set();
  const domains = new Set<string>();
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    try {
      const entry = JSON.parse(line) as { d?: string };
      if (entry.d) domains.add(entry.d);
    } catch {
      // torn line
    }
  }
  return domains;
}
