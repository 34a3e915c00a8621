// A real PostgreSQL server for the batch figure on the shared store: the tests' own helper
// (test/helpers/postgres.ts: `initdb` into a temporary folder, as the `postgres` user when run as
// root, `pg_ctl start` on a free loopback port with a private socket folder), built with esbuild
// into the scratch directory, since node cannot import TypeScript. The bench stops it after.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './proc.mjs';

/**
 * The helper's module (startPostgres, postgresBin), with `pg` bundled in: the scratch directory
 * has no node_modules to resolve it from.
 */
async function helper(scratch) {
  const outfile = join(scratch, 'postgres-helper.cjs');
  await build({
    entryPoints: [join(ROOT, 'test/helpers/postgres.ts')],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    external: ['pg-native'],
    logLevel: 'error',
  });
  return createRequire(import.meta.url)(outfile);
}

/**
 * Starts a PostgreSQL server for the bench, with `settings` beyond the helper's own (as `-c`):
 * `{ server }` (url, createDatabase(name), admin(sql), stop()), or
 * `{ missing }` saying why there is none on this machine (the figure then says so).
 */
export async function startBenchPostgres(scratch, settings = {}) {
  const { postgresBin, startPostgres } = await helper(scratch);
  const found = postgresBin();
  if ('reason' in found) return { missing: found.reason };
  return { server: await startPostgres({ settings }) };
}
