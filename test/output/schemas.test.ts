// The JSON Schemas of schemas/ (issue 46) against the real -o json and -o ndjson output of every
// command that prints JSON, run in-process against a sandbox over loopback HTTP: a schema that no
// longer matches what a command prints fails here, and so does a command or a schema left out.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { BIN, cleanEnv, ROOT } from '../helpers/cli.js';
import { KEYS } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { type SandboxHandle, sandboxAndDirForTests } from '../helpers/sandbox.js';

const SCHEMAS = join(ROOT, 'schemas');
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const schemaFiles = readdirSync(SCHEMAS).filter((name) => name.endsWith('.json'));
for (const name of schemaFiles) ajv.addSchema(JSON.parse(readFileSync(join(SCHEMAS, name), 'utf8')), name);

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-schemas-', { host: '127.0.0.1', companies: 2000 }, (s, d) => {
  sandbox = s;
  dir = d;
});

/** One environment for every case: one store, so `store export` and `spend` have something. */
const env = () => ({
  HOME: join(dir, 'home'),
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
  XDG_STATE_HOME: join(dir, 'state'),
  COMPANY_DATA_BASE_URL: sandbox.url,
  COMPANY_DATA_API_KEY: KEYS.full,
});

interface SchemaCase {
  argv: string[];
  /** The schema of the -o json document. */
  json: string;
  /** The schema of each -o ndjson line. */
  ndjson: string;
}

const input = () => {
  const path = join(dir, 'companies.csv');
  writeFileSync(path, readFileSync(join(ROOT, 'examples', 'companies.csv')));
  return path;
};

/** The cases, in order (the batch fills the store that `store` and `spend` read). */
const CASES: Array<[string, () => SchemaCase]> = [
  [
    'enrich',
    () => ({ argv: ['enrich', 'acme-shoes.com', 'globex.io'], json: 'enrich', ndjson: 'enrich.line' }),
  ],
  [
    'enrich (batch)',
    () => ({ argv: ['enrich', '--input', input()], json: 'enrich-batch', ndjson: 'enrich-batch.line' }),
  ],
  [
    'enrich --dry-run',
    () => ({
      argv: ['enrich', '--input', input(), '--dry-run'],
      json: 'enrich-dry-run',
      ndjson: 'enrich-dry-run',
    }),
  ],
  ['search', () => ({ argv: ['search', 'shoes', '--limit', '3'], json: 'search', ndjson: 'search.line' })],
  [
    'search --max-rows',
    () => ({ argv: ['search', 'shoes', '--max-rows', '3'], json: 'search', ndjson: 'search.line' }),
  ],
  [
    'search --dry-run',
    () => ({ argv: ['search', 'shoes', '--all', '--dry-run'], json: 'dry-run', ndjson: 'dry-run' }),
  ],
  [
    'breakdown',
    () => ({
      argv: ['breakdown', 'country', 'shoes', '--limit', '3'],
      json: 'breakdown',
      ndjson: 'breakdown.line',
    }),
  ],
  [
    'breakdown --dry-run',
    () => ({ argv: ['breakdown', 'country', 'shoes', '--dry-run'], json: 'dry-run', ndjson: 'dry-run' }),
  ],
  [
    'lookalike',
    () => ({
      argv: ['lookalike', 'acme-shoes.com', '-k', '3', '--evidence'],
      json: 'lookalike',
      ndjson: 'lookalike.line',
    }),
  ],
  [
    'lookalike (several seeds)',
    () => ({
      argv: ['lookalike', 'acme-shoes.com', 'globex.io', '-k', '3'],
      json: 'lookalike',
      ndjson: 'lookalike.line',
    }),
  ],
  [
    'lookalike --dry-run',
    () => ({
      argv: ['lookalike', 'acme-shoes.com', 'globex.io', '--dry-run'],
      json: 'dry-run',
      ndjson: 'dry-run',
    }),
  ],
  ['products', () => ({ argv: ['products'], json: 'products', ndjson: 'products.line' })],
  ['fields', () => ({ argv: ['fields'], json: 'fields', ndjson: 'fields.line' })],
  ['errors', () => ({ argv: ['errors'], json: 'errors', ndjson: 'errors.line' })],
  ['me', () => ({ argv: ['me'], json: 'me', ndjson: 'me' })],
  ['spend', () => ({ argv: ['spend'], json: 'spend', ndjson: 'spend.line' })],
  ['doctor', () => ({ argv: ['doctor'], json: 'doctor', ndjson: 'doctor.line' })],
  ['config show', () => ({ argv: ['config', 'show'], json: 'config-show', ndjson: 'config-show.line' })],
  ['config list', () => ({ argv: ['config', 'list'], json: 'config-list', ndjson: 'config-list.line' })],
  ['store info', () => ({ argv: ['store', 'info'], json: 'store-info', ndjson: 'store-info' })],
  ['store export', () => ({ argv: ['store', 'export'], json: 'store-export', ndjson: 'store-export.line' })],
  [
    'store prune',
    () => ({ argv: ['store', 'prune', '--max-age', '30d'], json: 'store-prune', ndjson: 'store-prune' }),
  ],
];

/** Commands that print no JSON of their own, and why. */
const NO_JSON: Record<string, string> = {
  api: "prints the service's own response, whatever its shape",
  mcp: 'speaks the MCP protocol on stdio',
  completion: 'prints a shell script',
  sandbox: 'serves until stopped (its start line: checked below)',
  'store clear': 'says what it removed on stderr',
  'config use': 'says what it chose on stderr',
  'config path': 'prints a path',
  'config set-key': 'says what it saved on stderr',
  'config set': 'says what it saved on stderr',
  'config unset': 'says what it removed on stderr',
  'config delete-profile': 'says what it deleted on stderr',
  help: 'prints help',
};

function validate(schema: string, value: unknown): string {
  const check = ajv.getSchema(`${schema}.json`);
  if (!check) throw new Error(`no schema ${schema}.json`);
  return check(value) ? '' : ajv.errorsText(check.errors);
}

describe('the JSON Schemas in schemas/ hold for real output', () => {
  const used = new Set<string>(['problem', 'sandbox.line']);
  it.each(CASES)('%s: -o json and -o ndjson', async (_name, make) => {
    const c = make();
    for (const format of ['json', 'ndjson'] as const) {
      const r = await runInProcess([...c.argv, '-o', format], { env: env() });
      expect([0, 6], `${c.argv.join(' ')} -o ${format}: ${r.stderr}`).toContain(r.code);
      if (format === 'json') {
        expect(validate(c.json, JSON.parse(r.stdout))).toBe('');
        used.add(c.json);
      } else {
        const lines = r.stdout.trimEnd().split('\n');
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) expect(validate(c.ndjson, JSON.parse(line))).toBe('');
        used.add(c.ndjson);
      }
    }
  });

  it('a failure piped: the JSON problem line, plain and timestamped', async () => {
    const plain = await runInProcess(['enrich', 'nope..com', '-o', 'json'], { env: env() });
    expect(plain.code).toBe(2);
    expect(validate('problem', JSON.parse(plain.stderr))).toBe('');
    const stamped = await runInProcess(['--log-format', 'timestamped', 'me', '-o', 'json'], {
      env: { ...env(), COMPANY_DATA_API_KEY: 'cd_not_a_key_1234' },
    });
    expect(stamped.code).toBe(3);
    const line = JSON.parse(stamped.stderr);
    expect(line).toMatchObject({ time: '2026-11-24T12:00:00Z', code: 'invalid_api_key' });
    expect(validate('problem', line)).toBe('');
  });

  it('the start line of `sandbox` (the built binary: it serves until SIGTERM)', async () => {
    const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--companies', '100'], {
      env: cleanEnv(env()),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (chunk) => {
          text += chunk;
          if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
        });
        child.once('exit', () => reject(new Error(`sandbox exited before its start line: ${text}`)));
      });
      expect(validate('sandbox.line', JSON.parse(first))).toBe('');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('a schema fails on output of another shape (the schemas can fail)', () => {
    expect(validate('search', { rows: 'not a list' })).not.toBe('');
    expect(
      validate('dry-run', { request_count: 1, worst_case_per_request: 1, worst_case_credits: 1, extra: 1 }),
    ).not.toBe('');
    expect(validate('problem', { code: 'x' })).not.toBe('');
  });

  it('every schema in schemas/ was used, and every command prints JSON checked here or says why not', () => {
    expect(schemaFiles.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...used].sort());
    const covered = new Set(
      CASES.map(([, make]) =>
        make()
          .argv.filter((a) => /^[a-z-]+$/.test(a))
          .slice(0, 2),
      ),
    );
    const paths = (command: Command, prefix: string[] = []): string[] =>
      command.commands.flatMap((sub) =>
        sub.commands.length > 0 ? paths(sub, [...prefix, sub.name()]) : [[...prefix, sub.name()].join(' ')],
      );
    for (const path of paths(buildProgram())) {
      const isCovered = [...covered].some((argv) => argv.join(' ').startsWith(path));
      expect(isCovered || path in NO_JSON, `${path}: no schema case and no reason`).toBe(true);
    }
  });
});
