// The domains one batch has met, for telling a first row from a duplicate. A table of a private,
// temporary SQLite database of the run's own (pages beyond SQLite's small cache go to a temporary
// file, deleted when it closes): a million domains take disk, not the process's memory, whatever
// back end the result store is on.
import type Database from 'better-sqlite3';

export interface SeenSet {
  /** True the first time `domain` is added. */
  add(domain: string): boolean;
  close(): void;
}

export async function seenSet(): Promise<SeenSet> {
  const { default: Sqlite } = await import('better-sqlite3');
  const db: Database.Database = new Sqlite('');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE seen (domain TEXT PRIMARY KEY) WITHOUT ROWID');
  const insert = db.prepare('INSERT OR IGNORE INTO seen (domain) VALUES (?)');
  return {
    add: (domain) => insert.run(domain).changes === 1,
    close: () => db.close(),
  };
}
