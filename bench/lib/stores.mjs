// The PostgreSQL store against the SQLite store, side by side in one run (issue 48): the same
// batch into an empty store of each kind at 20 ms and at 0 ms (rows per second, process start to
// exit), the statements the PostgreSQL store ran per bought domain (pg_stat_statements, every
// statement of the run's role in its database), and the time of one month hold with 10 and with
// 1,000,000 ledger entries in the month (the store's own code, bench/lib/hold-probe.ts).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { enrichRun, warmSandbox } from './batch.mjs';
import { startBenchPostgres } from './postgres.mjs';
import { ROOT, startSandbox } from './proc.mjs';
import { fastest, figure, median } from './stats.mjs';

/** The hold probe, bundled beside the build's node_modules (better-sqlite3 and pg resolve there). */
async function holdProbe(scratch) {
  const outfile = join(scratch, 'app', 'hold-probe.cjs');
  await build({
    entryPoints: [join(ROOT, 'bench/lib/hold-probe.ts')],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    external: ['better-sqlite3', 'pg', 'pg-native'],
    logLevel: 'error',
  });
  return createRequire(import.meta.url)(outfile);
}

const round = (n) => Math.round(n * 100) / 100;
const brief = (r) => ({
  seconds: round(r.seconds),
  rowsPerSecond: Math.round(r.rowsPerSecond),
  cpuUsPerRow: Math.round(r.cpuUsPerRow),
});

/**
 * Every figure of the group, pushed to `figures`. `batchInput(rows, tag)` writes the input;
 * `sizes.storeCompareRows` rows a run, `repeats` runs of each side (the fastest counts).
 */
export async function storeFigures({
  figures,
  scratch,
  log,
  rows,
  repeats,
  concurrency,
  batchInput,
  holdRows,
}) {
  const ids = {
    at20: 'stores.postgres-vs-sqlite-20',
    at0: 'stores.postgres-vs-sqlite-0',
    statements: 'stores.statements-per-domain',
    hold: 'stores.hold-million-vs-ten',
  };
  const names = {
    at20: `batch, ${rows} domains, 20 ms: PostgreSQL store rows/s vs SQLite store`,
    at0: `batch, ${rows} domains, 0 ms: PostgreSQL store rows/s vs SQLite store`,
    statements: 'PostgreSQL statements per bought domain (20 ms run)',
    hold: `month hold, ${holdRows.toLocaleString('en-US')} vs 10 ledger entries in the month (PostgreSQL)`,
  };
  const targets = {
    at20: { op: '>=', value: 0.9 },
    at0: { op: '>=', value: 0.6 },
    statements: { op: '<=', value: 3, unit: 'statements' },
    hold: { op: '<=', value: 2 },
  };
  log('stores: starting a PostgreSQL server (initdb, pg_ctl) with pg_stat_statements');
  const started = await startBenchPostgres(scratch, { shared_preload_libraries: 'pg_stat_statements' });
  if (started.missing) {
    for (const key of Object.keys(ids))
      figures.push(
        figure({
          id: ids[key],
          name: names[key],
          ratio: Number.NaN,
          target: targets[key],
          skipped: started.missing,
        }),
      );
    return;
  }
  const postgres = started.server;
  let databases = 0;
  try {
    await postgres.admin('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const statementsOf = async (database) => {
      const [row] = await postgres.admin(
        `SELECT COALESCE(SUM(calls), 0)::bigint AS calls FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)
           AND userid = (SELECT oid FROM pg_roles WHERE rolname = 'company')`,
        [database],
      );
      return Number(row.calls);
    };
    const { domains, input } = await batchInput(rows, 'stores');
    const side = async (latency) => {
      const sandbox = await startSandbox({ companies: rows, latency, scratch });
      try {
        await warmSandbox(sandbox, domains.slice(0, 4 * concurrency), concurrency);
        const common = { sandbox, input, rows, concurrency, scratch };
        const sqlite = [];
        const pg = [];
        let statements;
        for (let i = 0; i < repeats; i++) {
          log(`stores: enrich ${rows} domains at ${latency} ms on the SQLite store`);
          sqlite.push(await enrichRun({ ...common, tag: `stores-sqlite-${latency}` }));
          const database = `bench_stores_${++databases}`;
          const storeUrl = await postgres.createDatabase(database);
          await postgres.admin('SELECT pg_stat_statements_reset()');
          log(`stores: enrich ${rows} domains at ${latency} ms on the PostgreSQL store`);
          pg.push(await enrichRun({ ...common, tag: `stores-pg-${latency}`, storeUrl }));
          statements ??= (await statementsOf(database)) / rows;
        }
        // Once more under a month cap, for its statements: the cap must not add any.
        const capped = `bench_stores_${++databases}`;
        const cappedUrl = await postgres.createDatabase(capped);
        await postgres.admin('SELECT pg_stat_statements_reset()');
        log(`stores: enrich ${rows} domains at ${latency} ms on the PostgreSQL store, --budget-month`);
        await enrichRun({
          ...common,
          tag: `stores-pg-cap-${latency}`,
          storeUrl: cappedUrl,
          extraArgs: ['--budget-month', '100000000'],
        });
        const statementsCapped = (await statementsOf(capped)) / rows;
        return {
          sqlite: fastest(sqlite),
          pg: fastest(pg),
          sqliteRuns: sqlite,
          pgRuns: pg,
          statements,
          statementsCapped,
        };
      } finally {
        await sandbox.stop();
      }
    };
    const at20 = await side(20);
    const at0 = await side(0);
    for (const [key, got, latency] of [
      ['at20', at20, 20],
      ['at0', at0, 0],
    ]) {
      figures.push(
        figure({
          id: ids[key],
          name: names[key],
          ratio: got.pg.rowsPerSecond / got.sqlite.rowsPerSecond,
          target: targets[key],
          note: `${Math.round(got.pg.rowsPerSecond)} vs ${Math.round(got.sqlite.rowsPerSecond)} rows/s; CPU ${Math.round(got.pg.cpuUsPerRow)} vs ${Math.round(got.sqlite.cpuUsPerRow)} µs/row`,
          details: {
            latencyMs: latency,
            concurrency,
            postgres: brief(got.pg),
            sqlite: brief(got.sqlite),
            postgresRuns: got.pgRuns.map(brief),
            sqliteRuns: got.sqliteRuns.map(brief),
            statementsPerDomain: round(got.statements),
            counted: 'the fastest run of each side, from process start to exit; CPU of the client only',
          },
        }),
      );
    }
    figures.push(
      figure({
        id: ids.statements,
        name: names.statements,
        ratio: at20.statements,
        target: targets.statements,
        note: `${round(at0.statements)} at 0 ms; under --budget-month ${round(at20.statementsCapped)} and ${round(at0.statementsCapped)}`,
        details: {
          at20: round(at20.statements),
          at0: round(at0.statements),
          at20Capped: round(at20.statementsCapped),
          at0Capped: round(at0.statementsCapped),
          counted:
            "pg_stat_statements: every statement of the run's role in its database (BEGIN and COMMIT included), over the rows bought",
        },
      }),
    );

    const { holdTimes } = await holdProbe(scratch);
    const holds = 300;
    const times = {};
    for (const count of [10, holdRows]) {
      const database = `bench_hold_${count}`;
      const url = await postgres.createDatabase(database);
      log(`stores: ${holds} month holds with ${count.toLocaleString('en-US')} ledger entries in the month`);
      times[count] = await holdTimes({ where: { url }, rows: count, holds });
    }
    const few = median(times[10]);
    const many = median(times[holdRows]);
    figures.push(
      figure({
        id: ids.hold,
        name: names.hold,
        ratio: many / few,
        target: targets.hold,
        note: `${round(many)} ms vs ${round(few)} ms a hold (median of ${holds})`,
        details: { holds, medianMs: { ten: round(few), many: round(many) }, ledgerRows: holdRows },
      }),
    );
  } finally {
    await postgres.stop();
  }
}
