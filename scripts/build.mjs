// Bundles the CLI into one CommonJS file, dist/cli.cjs, with a source map beside it. Every
// dependency is in the bundle except the package's runtime dependencies (better-sqlite3, a native
// module: its compiled addon cannot be bundled), which an install puts in node_modules. The build goes to a fresh sibling directory that is swapped in at the end, so a program
// started during a rebuild (a test, a cron job) never sees a half-written dist/.
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = fileURLToPath(new URL('../dist', import.meta.url));
const staging = `${dist}.build-${process.pid}`;
const retired = `${dist}.old-${process.pid}`;
rmSync(staging, { recursive: true, force: true });

await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: staging,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { __VERSION__: JSON.stringify(pkg.version) },
  external: Object.keys(pkg.dependencies ?? {}),
});

try {
  renameSync(dist, retired);
} catch {
  // first build: nothing to retire
}
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });
