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

// Libraries that one command or one kind of file needs go to bundles of their own, which the CLI
// requires only then: every other command would otherwise load and compile them at start-up.
// The MCP SDK and zod (src/mcp/sdk.ts, `company-data mcp`: docs/mcp.md) and ExcelJS
// (src/workbook/exceljs.ts, an .xlsx input or output: docs/workbooks.md).
const APART = [
  { source: '../src/mcp/sdk.ts', specifier: './sdk.js', bundle: 'mcp-sdk' },
  { source: '../src/workbook/exceljs.ts', specifier: './exceljs.js', bundle: 'exceljs' },
].map((apart) => ({ ...apart, path: fileURLToPath(new URL(apart.source, import.meta.url)) }));
const bundlesApart = {
  name: 'bundles-apart',
  setup(b) {
    b.onResolve({ filter: /(^|\/)(sdk|exceljs)\.js$/ }, (args) => {
      const resolved = fileURLToPath(new URL(args.path.replace(/\.js$/, '.ts'), `file://${args.importer}`));
      const apart = APART.find((a) => a.path === resolved);
      return apart ? { path: `./${apart.bundle}.cjs`, external: true } : undefined;
    });
  },
};

// ExcelJS's archiver uses archiver-utils 2, which calls the deprecated `new Buffer()`: Node warns
// on stderr (DEP0005) when such a call comes from outside node_modules, as it does from the
// bundle. The three calls are the ones Buffer.alloc and Buffer.from make without the warning.
const noDeprecatedBuffer = {
  name: 'no-deprecated-buffer',
  setup(b) {
    b.onLoad({ filter: /[\\/]archiver-utils[\\/]index\.js$/ }, async (args) => {
      const text = readFileSync(args.path, 'utf8')
        .replace('new Buffer(size)', 'Buffer.alloc(size)')
        .replace('new Buffer(0)', 'Buffer.alloc(0)')
        .replace('new Buffer(source)', 'Buffer.from(source)');
      return { contents: text, loader: 'js' };
    });
  },
};

await Promise.all([
  build({ ...common, entryPoints: { cli: 'src/cli.ts' }, plugins: [bundlesApart] }),
  // Third-party code only, loaded by one command or one kind of file: minified, it weighs half as
  // much in the package.
  ...APART.map((apart) =>
    build({
      ...common,
      entryPoints: { [apart.bundle]: apart.source.replace('../', '') },
      minify: true,
      plugins: [noDeprecatedBuffer],
    }),
  ),
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
