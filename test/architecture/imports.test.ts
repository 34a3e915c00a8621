// The layers of docs/architecture.md, held by the import graph of src/: every import of every
// module (static, `export ... from`, and `await import('...')`), read with the TypeScript parser.
// A rule broken names the file and what it imports, so the fix is plain.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface Module {
  /** Relative to src/, with "/" (e.g. "mcp/tools.ts"). */
  file: string;
  /** What it imports: src/ modules as "dir/name.ts", packages by name. */
  imports: string[];
  /** Every identifier the code names (comments and strings aside). */
  names: Set<string>;
}

function specifierOf(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return relative(SRC, resolve(dirname(from), specifier)).replace(/\.js$/, '.ts');
}

function read(path: string): Module {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const imports: string[] = [];
  const names = new Set<string>();
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      imports.push(specifierOf(path, node.moduleSpecifier.text));
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      imports.push(specifierOf(path, node.arguments[0].text));
    } else if (ts.isIdentifier(node)) {
      names.add(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { file: relative(SRC, path), imports, names };
}

const modules = sources(SRC).map(read);

/** The imports of modules under `from` that reach a module `to` matches: "file -> import". */
function crossings(from: (file: string) => boolean, to: (target: string) => boolean): string[] {
  return modules
    .filter((m) => from(m.file))
    .flatMap((m) => m.imports.filter(to).map((target) => `${m.file} -> ${target}`));
}

const under = (dir: string) => (file: string) => file.startsWith(`${dir}/`);

/** The senders of a paid request: only the one buyer may name them. */
const PAID_SENDERS = ['enrichDomain', 'domainLookup', 'searchCompanies', 'fetchBreakdown', 'fetchLookalikes'];
/** Where they are defined, and the one buyer. */
const SELLERS = new Set(['api/domains.ts', 'api/search.ts', 'api/lookalike.ts', 'spend/buy.ts']);

describe('the layers (docs/architecture.md, "Which layer may import which")', () => {
  it('the import graph was read (the rules below would hold on nothing otherwise)', () => {
    expect(modules.length).toBeGreaterThan(100);
    const tools = modules.find((m) => m.file === 'mcp/paid-tools.ts');
    expect(tools?.imports).toContain('ops/search.ts');
  });

  it('the MCP server imports nothing of the command line (its commands, their kit, cli.ts)', () => {
    const cli = (target: string) =>
      target.startsWith('commands/') || target === 'cli.ts' || target === 'command-kit.ts';
    expect(crossings(under('mcp'), cli)).toEqual([]);
  });

  it('operations import no face: no command, no MCP module, no printer, no Commander', () => {
    // Text helpers (one line of a value, digit groups) are not printers.
    const text = new Set(['output/sanitize.ts', 'output/numbers.ts']);
    const face = (target: string) =>
      target.startsWith('commands/') ||
      target.startsWith('mcp/') ||
      (target.startsWith('output/') && !text.has(target)) ||
      target === 'cli.ts' ||
      target === 'commander';
    expect(crossings(under('ops'), face)).toEqual([]);
    const argv = modules.filter((m) => m.file.startsWith('ops/') && m.names.has('argv')).map((m) => m.file);
    expect(argv).toEqual([]);
  });

  it('the purchase layer imports nothing from the batch, the operations or the faces', () => {
    const above = (target: string) =>
      ['batch/', 'ops/', 'commands/', 'mcp/'].some((dir) => target.startsWith(dir)) || target === 'cli.ts';
    expect(crossings(under('spend'), above)).toEqual([]);
  });

  it('only the one buyer (src/spend/buy.ts) names a paid sender', () => {
    const naming = modules
      .filter((m) => !SELLERS.has(m.file))
      .flatMap((m) => PAID_SENDERS.filter((name) => m.names.has(name)).map((name) => `${m.file}: ${name}`));
    expect(naming).toEqual([]);
  });
});
