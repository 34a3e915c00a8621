// The last step of the build: V8's code caches for dist/cli.cjs and the vendor files beside it
// (see src/cli-loader.ts).
//
// A sandbox is started from the new build, and a few ordinary commands run against it, one
// process each: every process loads the caches the previous one left, runs its command and writes
// a cache of all it has compiled, so the last cache holds what all of them ran.
// - dist/cli.cjs: one-request commands only. A batch's own code stays out of it (the batch compiles
//   its part from source): with it, the cache grew by 73-81 KB of V8 data, a batch's first lookup
//   left ~5 ms sooner, 2,000 rows read within their runs' spread, and `errors -o json` the same
//   (docs/performance.md, "Twelfth pass" and "Fourteenth pass").
// - dist/vendor/*.cjs: a batch through a proxy (undici, which only proxied calls load, the suffix
//   list, the CSV parser), a CSV and a table output. The CLI sets two V8 flags in a batch, and V8
//   refuses a cache made under other flags, so these processes set none (the CLI sets both only
//   after the files have loaded). ora, the spinner of a terminal, has no cache.
// Each cache is then checked by loading it in a fresh process; one that is not used there is
// removed, and the build goes on without it (that file then compiles from source).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startTunnelProxy } from './tunnel-proxy.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist/cli.cjs');
const loader = join(root, 'dist/loader.cjs');

// One command in a process of its own, through the loader, then the caches written: the CLI's
// (MAIN=1), or those of the vendor files it loaded, with V8's flags left as they are.
const RUN_ONE = `
const { loadBundle, loadedBundles } = require(${JSON.stringify(loader)});
const main = process.env.MAIN === '1';
if (!main) require('node:v8').setFlagsFromString = () => {};
const cli = loadBundle(${JSON.stringify(bundle)});
cli.exports.main(process.argv.slice(1)).then((code) => {
  for (const loaded of loadedBundles()) if ((loaded === cli) === main) loaded.writeCache();
  process.exitCode = code;
});
`;

/** The vendor files that get a cache (ora, loaded only on a terminal, does not). */
const VENDOR_CACHED = ['undici', 'tldts', 'csv-parse', 'csv-stringify', 'cli-table3'].map((name) =>
  join(root, `dist/vendor/${name}.cjs`),
);

/** Runs one command in a process of its own; resolves with its exit code and stderr. */
function runOne(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', RUN_ONE, '--', ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

export async function buildCodeCache() {
  for (const file of [bundle, ...VENDOR_CACHED]) rmSync(`${file}.cache`, { force: true });
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
  // The batch that warms undici goes through this proxy: the CLI loads undici only for that.
  const proxy = await startTunnelProxy();
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
    const input = join(scratch, 'batch.csv');
    writeFileSync(
      input,
      // Quoted, so that csv-parse loads (an input without quotes is read without it).
      'domain\nacme-shoes.com\ninitech.co.uk\nno-such-company.example\n"https://www.Acme-Shoes.com/"\n',
    );
    const base = ['--base-url', url];
    // A host only the proxy knows, so that the batch's lookups go through it.
    const proxied = [
      '--base-url',
      url.replace('//127.0.0.1:', '//sandbox.invalid:'),
      '--allow-insecure-http',
    ];
    const runs = [
      // The CLI's own cache.
      ...[
        ['-o', 'json', 'errors'],
        ['products'],
        ['-o', 'json', 'fields'],
        ['-o', 'json', 'search', 'shoes', '--exclude', list],
        ['search', 'shoes', '--exclude-domain', 'excluded-4.com'],
        ['enrich', 'no-such-company.example'],
        ['me'],
      ].map((command) => ({ command: [...base, ...command], main: true })),
      // The vendor files'.
      {
        command: [...proxied, '--quiet', 'enrich', '--input', input, '--output', join(scratch, 'out.csv')],
        main: false,
        proxy: true,
      },
      ...[
        ['-o', 'csv', 'errors'],
        ['-o', 'table', 'products'],
      ].map((command) => ({ command: [...base, ...command], main: false })),
    ];
    for (const { command, main, proxy: viaProxy } of runs) {
      const run = await runOne(command, {
        ...env,
        ...(viaProxy ? { HTTP_PROXY: proxy.url } : {}),
        COMPANY_DATA_API_KEY: keys.full,
        MAIN: main ? '1' : '0',
      });
      if (run.status !== 0) {
        throw new Error(`company-data ${command.join(' ')} exited with ${run.status}: ${run.stderr.trim()}`);
      }
    }
  } finally {
    await proxy.close();
    sandbox.kill('SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
  }
  // Each cache as a fresh process finds it, loading the file alone through the loader.
  const unused = [];
  for (const file of [bundle, ...VENDOR_CACHED]) {
    const check = spawnSync(
      process.execPath,
      [
        '-e',
        `process.stdout.write(require(${JSON.stringify(loader)}).loadBundle(${JSON.stringify(file)}).cache)`,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
    );
    if (check.stdout !== 'used') {
      rmSync(`${file}.cache`, { force: true });
      unused.push(`${file.slice(root.length)} (${check.stdout || check.stderr.trim()})`);
    }
  }
  if (unused.length > 0) throw new Error(`a fresh process did not use the cache of ${unused.join(', ')}`);
}
