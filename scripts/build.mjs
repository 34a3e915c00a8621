// Bundles the CLI into one CommonJS file, dist/cli.cjs, with a source map beside it (and the MCP
// SDK, which only `company-data mcp` uses, into dist/mcp-sdk.cjs). Every
// dependency is in the bundle except the package's runtime dependencies (better-sqlite3, a native
// module: its compiled addon cannot be bundled), which an install puts in node_modules. The build goes to a fresh sibling directory that is swapped in at the end, so a program
// started during a rebuild (a test, a cron job) never sees a half-written dist/.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = fileURLToPath(new URL('../dist', import.meta.url));
const staging = `${dist}.build-${process.pid}`;
const retired = `${dist}.old-${process.pid}`;
rmSync(staging, { recursive: true, force: true });

const common = {
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
};

// The MCP SDK and zod (src/mcp/sdk.ts) go to a bundle of their own, dist/mcp-sdk.cjs, which the
// CLI requires when `company-data mcp` runs: every other command would otherwise load and compile
// them at start-up (docs/mcp.md).
const MCP_SDK = fileURLToPath(new URL('../src/mcp/sdk.ts', import.meta.url));
const mcpSdkApart = {
  name: 'mcp-sdk-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/sdk\.js$/ }, (args) =>
      fileURLToPath(new URL('./sdk.ts', `file://${args.importer}`)) === MCP_SDK
        ? { path: './mcp-sdk.cjs', external: true }
        : undefined,
    );
  },
};

await Promise.all([
  build({ ...common, entryPoints: { cli: 'src/cli.ts' }, plugins: [mcpSdkApart] }),
  // Third-party code only, loaded by one command: minified, it weighs half as much in the package.
  build({ ...common, entryPoints: { 'mcp-sdk': 'src/mcp/sdk.ts' }, minify: true }),
]);

// company-data(1), from the command declarations of the bundle just built (src/man-page.ts), read
// with its examples fitted to 80 columns once man has indented them (10): `man` in package.json installs it.
{
  const cli = createRequire(import.meta.url)(`${staging}/cli.cjs`);
  const invocation = {
    argv: [],
    env: { COLUMNS: '68' },
    now: Date.now,
    streams: {},
    exitCode: 0,
    cleanups: [],
  };
  writeFileSync(`${staging}/company-data.1`, cli.renderManPage(cli.buildProgram(invocation), pkg.version));
}

try {
  renameSync(dist, retired);
} catch {
  // first build: nothing to retire
}
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });
