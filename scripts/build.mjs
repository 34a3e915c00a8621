// Bundles the CLI into dist/ with code splitting, so each command and heavy dependency is a
// separate chunk loaded only when used (see docs/performance.md for why).
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

// Build into a fresh sibling directory and swap it in at the end: stale chunks never linger, and
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
export default { Agent, Client, Dispatcher, EnvHttpProxyAgent, errors, Pool, ProxyAgent };
`;

const undiciDispatchersOnly = {
  name: 'undici-dispatchers-only',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', namespace: 'undici-dispatchers' }));
    b.onLoad({ filter: /.*/, namespace: 'undici-dispatchers' }, () => ({
      contents: UNDICI_DISPATCHERS,
      resolveDir: fileURLToPath(new URL('../node_modules/undici', import.meta.url)),
      loader: 'js',
    }));
  },
};

/**
 * Commander requires node:child_process at load, for executable subcommands this CLI never has;
 * that pulls in net and the stream stack before `--version` can print (profiled: the largest
 * part of what `--version` costs over bare node). Commander gets spawn() on first use instead.
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

/**
 * tldts (the public suffix list, ~180 KB of source) is loaded on first use by src/domain.ts, but
 * bundled into the domain chunk V8 still had to scan it whenever that chunk loaded: about 6 ms on
 * every search with exclusions and every batch, most of which never need it (common TLDs are
 * answered without it). It is built to a file of its own, dist/tldts.cjs, which the chunk's
 * require() (see the banner) reads only when called.
 */
const TLDTS_FILE = './tldts.cjs';
const tldtsOnItsOwn = {
  name: 'tldts-on-its-own',
  setup(b) {
    b.onResolve({ filter: /^tldts$/ }, (args) =>
      args.kind === 'require-call' ? { path: TLDTS_FILE, external: true } : undefined,
    );
  },
};

await build({
  entryPoints: [fileURLToPath(new URL('../node_modules/tldts/dist/cjs/index.js', import.meta.url))],
  outfile: `${staging}/${TLDTS_FILE}`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
});

await build({
  entryPoints: ['src/cli.ts'],
  outdir: staging,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [undiciDispatchersOnly, lazyChildProcessForCommander, tldtsOnItsOwn],
  define: { __VERSION__: JSON.stringify(pkg.version) },
  banner: {
    // Some bundled CommonJS dependencies call require() for Node built-ins.
    js: "import { createRequire as __cdCreateRequire } from 'node:module'; const require = __cdCreateRequire(import.meta.url);",
  },
});

try {
  renameSync(dist, retired);
} catch {
  // first build: nothing to retire
}
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });
