// How many connections a process opens to a PostgreSQL store, against a server that has few: ten
// processes of the built binary at once, each enriching a batch under a month cap, against a
// server started with max_connections=40 (37 for ordinary roles), and the message of a server
// that refuses one more. Real processes and a real server: a connection slot is the server's.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { withoutPassword } from '../../src/store/location.js';
import { runCli } from '../helpers/cli.js';
import { hostIn } from '../helpers/hosts.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { forwardTo, listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-store-connections-', { companies: 600, latencyMs: 5 }, (s, d) => {
  sandbox = s;
  dir = d;
});

const HOSTS = 10;
const CONCURRENCY = 2;
const missing = postgresMissing();
let server: Postgres;
beforeAll(async () => {
  if (!missing) server = await startPostgres({ settings: { max_connections: 40 } });
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const host = (name: string, store: string, base: string) =>
  hostIn(join(dir, name), store, base, sandbox.keys.full);

describe.runIf(!missing)('connections to a PostgreSQL store', { timeout: 120_000 }, () => {
  it('ten processes at once fit a server of max_connections=40, two connections each; one more is refused by name', async () => {
    const store = await server.createDatabase('ten');
    const sessions = () =>
      server.admin<{ n: number }>(
        "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = 'ten' AND usename = 'company'",
      );
    // A front that holds the lookups until every host has all its lookups waiting (so all ten
    // are running, their store open), counts the sessions then, and lets everything through.
    let during: number | undefined;
    const held: Array<() => void> = [];
    const front = createServer((req, res) => {
      const pass = () => forwardTo(sandbox.url, req, res);
      if (during !== undefined || !req.url?.startsWith('/api/domains/')) return pass();
      held.push(pass);
      if (held.length < HOSTS * CONCURRENCY) return;
      void sessions().then(([{ n }]) => {
        during = n;
        for (const release of held.splice(0)) release();
      });
    });
    const listening = await listenLocal(front);
    try {
      const domains = sandbox.dataset.companies.map((c) => c.domain);
      const runs = Array.from({ length: HOSTS }, (_, i) => {
        const h = host(`h${i}`, store, listening.url);
        const input = join(h.cwd, 'in.csv');
        // 60 domains each, overlapping their neighbours by half.
        writeFileSync(input, `domain\n${domains.slice(i * 30, i * 30 + 60).join('\n')}\n`);
        return runCli(
          [
            '-q',
            'enrich',
            '--input',
            input,
            '--output',
            'out.csv',
            '--concurrency',
            String(CONCURRENCY),
          ].concat(['--budget-month', '100000', '--rate', '0']),
          { env: h.env, cwd: h.cwd },
        );
      });
      const results = await Promise.all(runs);
      expect(results.map((r) => [r.code, r.stderr])).toEqual(results.map(() => [0, '']));
      expect(during).toBeLessThanOrEqual(HOSTS * 2);
      expect(during).toBeGreaterThanOrEqual(HOSTS);
    } finally {
      await listening.close();
    }

    // The ordinary slots taken by others (3 of 40 are reserved for superusers), and one more
    // process: refused, with a message that names max_connections and what to do.
    const others: pg.Client[] = [];
    try {
      for (;;) {
        const client = new pg.Client({ connectionString: store });
        try {
          await client.connect();
        } catch {
          break;
        }
        others.push(client);
      }
      // 37 less the helper's own superuser session: more than the ten hosts' twenty.
      expect(others.length).toBeGreaterThan(HOSTS * 2);
      const h = host('late', store, sandbox.url);
      const refused = await runCli(['store', 'info'], { env: h.env, cwd: h.cwd });
      // Piped, the problem is one JSON line on stderr.
      expect([refused.code, JSON.parse(refused.stderr)]).toEqual([
        2,
        {
          code: 'store_unavailable',
          status: 0,
          title: 'Cannot use the result store',
          detail: `${withoutPassword(store)}: the server refused a connection: all its connections are in use (its max_connections, less the slots it reserves for superusers); each company-data process opens up to 2 (store_connections, or COMPANY_DATA_STORE_CONNECTIONS)`,
          retryable: false,
          hint: "Raise max_connections in the server's postgresql.conf (and restart it), or run fewer processes at once on this database; each needs its connections while it runs.",
        },
      ]);
    } finally {
      await Promise.all(others.map((client) => client.end()));
    }
  });
});
