// The last step of the build: V8's code cache for dist/cli.cjs (see src/cli-loader.ts).
//
// A sandbox is started from the new build, and a few ordinary commands run against it, one
// process each: every process loads the cache the previous one left, runs its command and writes
// a cache of all it has compiled, so the last cache holds what all of them ran. Only commands
// whose calls go over node:http: loading undici sets a V8 flag, and V8 refuses a cache made under
// other flags. The result is checked by loading it in a fresh process; a cache that is not used
// there is removed, and the build goes on without it (the CLI then compiles from source).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist/cli.cjs');
const cacheFile = `${bundle}.cache`;
const loader = join(root, 'dist/loader.cjs');

// One command in a process of its own, through the loader, then the cache written.
const RUN_ONE = `
const { loadBundle } = require(${JSON.stringify(loader)});
const cli = loadBundle(${JSON.stringify(bundle)});
cli.exports.main(process.argv.slice(1)).then((code) => {
  cli.writeCache();
  process.exitCode = code;
});
`;

export async function buildCodeCache() {
  rmSync(cacheFile, { force: true });
  const scratch = mkdtempSync(join(tmpdir(), 'company-data-code-cache-'));
  // Nothing of the builder's own environment: a proxy variable would send the calls through
  // undici, NODE_OPTIONS would make a cache for other V8 flags, a COMPANY_DATA_* setting would
  // point the commands elsewhere.
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: scratch,
    XDG_CONFIG_HOME: join(scratch, 'config'),
    XDG_CACHE_HOME: join(scratch, 'cache'),
    NO_COLOR: '1',
  };
  const sandbox = spawn(
    process.execPath,
    [join(root, 'bin/company-data.js'), '--quiet', 'sandbox', '--port', '0'],
    {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  try {
    const [line] = await Promise.race([
      once(createInterface({ input: sandbox.stdout }), 'line'),
      once(sandbox, 'exit').then(([code]) => {
        throw new Error(`the sandbox exited with ${code} before listening`);
      }),
    ]);
    const { url, keys } = JSON.parse(line);
    const list = join(scratch, 'exclude.csv');
    writeFileSync(list, 'domain\nexcluded-1.com\nhttps://www.Excluded-2.com/about\nEXCLUDED-3.CO.UK\n');
    const base = ['--base-url', url];
    const commands = [
      ['-o', 'json', 'errors'],
      ['products'],
      ['-o', 'json', 'fields'],
      ['-o', 'json', 'search', 'shoes', '--exclude', list],
      ['search', 'shoes', '--exclude-domain', 'excluded-4.com'],
      ['enrich', 'no-such-company.example'],
      ['me'],
    ];
    for (const command of commands) {
      const run = spawnSync(process.execPath, ['-e', RUN_ONE, '--', ...base, ...command], {
        env: { ...env, COMPANY_DATA_API_KEY: keys.full },
        encoding: 'utf8',
      });
      if (run.status !== 0) {
        throw new Error(`company-data ${command.join(' ')} exited with ${run.status}: ${run.stderr.trim()}`);
      }
    }
  } finally {
    sandbox.kill('SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
  }
  const check = spawnSync(
    process.execPath,
    [
      '-e',
      `process.stdout.write(require(${JSON.stringify(loader)}).loadBundle(${JSON.stringify(bundle)}).cache)`,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
  );
  if (check.stdout !== 'used') {
    rmSync(cacheFile, { force: true });
    throw new Error(`a fresh process did not use the cache (${check.stdout || check.stderr.trim()})`);
  }
}
