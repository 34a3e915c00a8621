// Every ```console example of README.md runs here against the sandbox and must print what the
// README shows, so the README cannot rot. After an intended change of output, refresh it with
//   README_WRITE=1 npx vitest run test/e2e/readme.test.ts
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { makeWorkspace, normalise, parseExamples, runExample } from '../helpers/readme-examples.js';

const README = join(ROOT, 'README.md');
const text = readFileSync(README, 'utf8');
const examples = parseExamples(text);
const write = process.env.README_WRITE === '1';

describe('README examples', () => {
  it('has runnable examples, the main batch command first', () => {
    expect(examples.length).toBeGreaterThanOrEqual(10);
    expect(examples[0].command).toBe(
      'company-data --sandbox enrich --input examples/companies.csv --output enriched.csv',
    );
    expect(text).toContain('npm ci && ./bin/company-data.js --sandbox enrich --input examples/companies.csv');
    expect(text).toContain('npm ci && npm test');
  });

  it('each example exits as documented and prints what the README shows', async () => {
    // One workspace for all, in order: `cat enriched.csv` reads what the batch example wrote.
    const workspace = makeWorkspace();
    const results = [];
    try {
      for (const example of examples) results.push({ example, ...(await runExample(example, workspace)) });
    } finally {
      // Nothing left in the temporary directory after a run.
      rmSync(workspace.dir, { recursive: true, force: true });
    }

    if (write) {
      const lines = text.split('\n');
      // Replace from the bottom so earlier line numbers stay valid.
      for (const { example, output } of [...results].reverse()) {
        const body = output.replace(/\n+$/, '').split('\n');
        lines.splice(example.line + 1, example.shown.length, ...(output.trim() === '' ? [] : body));
      }
      writeFileSync(README, lines.join('\n'));
    }
    for (const { example, code, output } of results) {
      expect.soft(code, `exit code of: ${example.command}\n${output}`).toBe(example.expectedExit);
      if (!write) {
        expect
          .soft(normalise(output), `output of: ${example.command}`)
          .toBe(normalise(example.shown.join('\n')));
      }
    }
  }, 120_000);
});
