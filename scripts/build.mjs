// Bundles the CLI into dist/ as CommonJS (see docs/performance.md, "CommonJS bundle"):
//   dist/cli.cjs       the whole CLI (our code and Commander), one file
//   dist/version.cjs   what `--version` alone runs (bin/company-data.js picks it), a few KB
//   dist/vendor/*.cjs  the heavier dependencies, each require()d on first use
//   dist/loader.cjs    loads cli.cjs with V8's code cache (src/cli-loader.ts)
//   dist/**/*.cjs.cache V8's code caches for cli.cjs and the vendor files, made last by running a
//                      few commands (scripts/code-cache.mjs)
// Node 20 has no compile cache for ES modules, and its ESM loader resolves, reads and links each
// chunk of a split bundle in turn; one CommonJS file is read and compiled in one go. A dependency
// only some commands need stays out of cli.cjs, so no command pays to compile what it never runs.
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildCodeCache } from './code-cache.mjs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const nodeModules = fileURLToPath(new URL('../node_modules/', import.meta.url));

// Build into a fresh sibling directory and swap it in at the end: stale files never linger, and
// a program started during a rebuild (a test, a cron job) never sees a half-written dist/.
const dist = fileURLToPath(new URL('../dist', import.meta.url));
const staging = `${dist}.build-${process.pid}`;
const retired = `${dist}.old-${process.pid}`;
rmSync(staging, { recursive: true, force: true });

/**
 * undici's main entry also loads fetch, WebSocket, cookies, caches and mocks, and through them
 * node's own bundled undici and node:worker_threads: profiled, about a third of the CPU time of a
 * one-request command (docs/performance.md). The CLI uses only the dispatchers, so `undici` is
 * served from this entry instead. Dispatcher.prototype gets request()/stream()/... exactly as
 * undici's index.js gives them. A missing named export fails the build, not a run.
 */
const UNDICI_DISPATCHERS = `
import Dispatcher from './lib/dispatcher/dispatcher.js';
import api from './lib/api/index.js';
import Agent from './lib/dispatcher/agent.js';
import Client from './lib/dispatcher/client.js';
import Pool from './lib/dispatcher/pool.js';
import ProxyAgent from './lib/dispatcher/proxy-agent.js';
import EnvHttpProxyAgent from './lib/dispatcher/env-http-proxy-agent.js';
import errors from './lib/core/errors.js';
Object.assign(Dispatcher.prototype, api);
export { Agent, Client, Dispatcher, EnvHttpProxyAgent, errors, Pool, ProxyAgent };
`;

/**
 * Each vendor file: how src/ names the package, the file in dist/vendor/, and its entry. tldts is
 * the public suffix list (~180 KB), needed only for uncommon TLDs; cli-table3 only for tables;
 * csv-parse and csv-stringify for CSV; ora for a spinner on a terminal; undici for batches and
 * proxies.
 */
const VENDOR = [
  { spec: 'undici', file: 'undici', contents: UNDICI_DISPATCHERS, resolveDir: `${nodeModules}undici` },
  // ora is an ES module whose default export is the function; `import('ora')` in a CommonJS
  // bundle sees module.exports as that default, so the function is what the file exports.
  {
    spec: 'ora',
    file: 'ora',
    contents:
      "const ora = require('ora'); module.exports = ora.default; module.exports.default = ora.default;",
  },
  { spec: 'cli-table3', file: 'cli-table3' },
  { spec: 'csv-parse', file: 'csv-parse' },
  { spec: 'csv-stringify/sync', file: 'csv-stringify' },
  { spec: 'tldts', file: 'tldts' },
];

/** In cli.cjs, an import or require() of a vendor package becomes require('./vendor/<file>.cjs'). */
const vendorFiles = {
  name: 'vendor-files',
  setup(b) {
    const files = new Map(VENDOR.map((v) => [v.spec, v.file]));
    b.onResolve({ filter: /^[a-z@][^:]*$/ }, (args) => {
      const file = files.get(args.path);
      return file ? { path: `./vendor/${file}.cjs`, external: true } : undefined;
    });
  },
};

/**
 * Commander requires node:child_process at load, for executable subcommands this CLI never has;
 * that pulls in net and the stream stack before `--help` can print (profiled: the largest part of
 * what `--version` cost over bare node before it had its own entry). Commander gets spawn() on
 * first use instead.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      args.importer.includes('/node_modules/commander/')
        ? { path: 'child_process', namespace: 'lazy-child-process' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
  },
};

/** undici's node:http2 becomes scripts/lazy-http2.cjs: loaded only if HTTP/2 is ever used. */
const lazyHttp2ForUndici = {
  name: 'lazy-http2-for-undici',
  setup(b) {
    const shim = fileURLToPath(new URL('./lazy-http2.cjs', import.meta.url));
    // The shim's own require stays node's module.
    b.onResolve({ filter: /^node:http2$/ }, (args) => (args.importer === shim ? undefined : { path: shim }));
  },
};

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  // import() of a bundled module or a vendor file becomes require(): no ESM loader at run time.
  supported: { 'dynamic-import': false },
  define: { __VERSION__: JSON.stringify(pkg.version), 'import.meta.url': '__cdModule.url' },
  // src/ reads import.meta.url only where require() is missing (run from source by the tests), so
  // the URL is made on a read, not at every load of every file (~0.3 ms each).
  banner: {
    js: "const __cdModule = { get url() { return require('node:url').pathToFileURL(__filename).href; } };",
  },
};

await build({
  ...common,
  entryPoints: { cli: 'src/cli.ts', version: 'src/version.ts', loader: 'src/cli-loader.ts' },
  outdir: staging,
  outExtension: { '.js': '.cjs' },
  plugins: [vendorFiles, lazyChildProcessForCommander],
});

for (const vendor of VENDOR) {
  await build({
    ...common,
    stdin: {
      contents: vendor.contents ?? `module.exports = require(${JSON.stringify(vendor.spec)});`,
      resolveDir: vendor.resolveDir ?? nodeModules,
      loader: 'js',
    },
    outfile: `${staging}/vendor/${vendor.file}.cjs`,
    plugins: vendor.spec === 'undici' ? [lazyHttp2ForUndici] : [],
  });
}

try {
  renameSync(dist, retired);
} catch {
  // first build: nothing to retire
}
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });

// V8's code caches for the bundle and the vendor files, made by running a few commands of the new
// build (an optimisation: without them the CLI compiles from source, so a failure here is a
// warning, and a test holds the caches to being used).
try {
  await buildCodeCache();
} catch (error) {
  console.warn(`warning: code cache: ${error.message}`);
}
