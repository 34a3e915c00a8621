// A batch that must abort (the key is refused mid-run) lets the lookups still in flight finish as
// an interrupt does, for at most its drain limit (10 s), then ends them through the run's drain
// signal, instead of waiting for them to time out. The real binary talks
// to a loopback server that forwards to a sandbox, except that some domains never get an answer
// and one is answered "invalid_api_key".
import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { forwardTo, listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let home: string;
sandboxAndDirForTests('cd-enrich-abort-', { companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

let front: { url: string; close: () => Promise<void> };
const held: ServerResponse[] = [];
let revokedAnswered = false;

beforeAll(async () => {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path.startsWith('/api/domains/hang-')) {
      held.push(res); // never answered: only an abort ends these calls
      return;
    }
    if (path === '/api/domains/revoked.com') {
      // Answered once the five hanging lookups have all arrived, whatever order their
      // connections were made in: they are then surely in flight when the run aborts.
      whenHeld(5, () => refuse(res));
      return;
    }
    forwardTo(sandbox.url, req, res);
  });
  front = await listenLocal(server);
});

function whenHeld(count: number, then: () => void): void {
  if (held.length >= count) then();
  else setTimeout(() => whenHeld(count, then), 5);
}

function refuse(res: ServerResponse): void {
  revokedAnswered = true;
  res.writeHead(401, { 'content-type': 'application/problem+json' });
  res.end(
    JSON.stringify({
      type: 'https://docs.example/problems/invalid_api_key',
      title: 'Invalid API key',
      status: 401,
      code: 'invalid_api_key',
      detail: 'The API key was revoked.',
    }),
  );
}

afterAll(async () => {
  await front.close();
});

describe('enrich --input when the run must abort', () => {
  it('ends the lookups still in flight after the drain limit instead of waiting for their timeout', async () => {
    const input = join(home, 'in.csv');
    const hanging = Array.from({ length: 5 }, (_, i) => `hang-${i}.com`);
    writeFileSync(input, `domain\n${hanging.join('\n')}\nrevoked.com\nacme-shoes.com\n`);
    // With a two-minute timeout per attempt, a run that waited for the hanging calls would still
    // be running when runCli kills it (20 s): the test would see SIGKILL, not an exit code.
    const r = await runCli(
      [
        '--base-url',
        front.url,
        '--timeout',
        '120',
        'enrich',
        '--input',
        input,
        '--output',
        join(home, 'out.csv'),
        '--concurrency',
        '8',
      ],
      {
        env: {
          COMPANY_DATA_API_KEY: sandbox.keys.full,
          XDG_CONFIG_HOME: join(home, 'config'),
          XDG_CACHE_HOME: join(home, 'cache'),
        },
        timeoutMs: 20_000,
      },
    );
    expect(r.signal).toBeNull();
    expect(revokedAnswered).toBe(true);
    expect(held.length).toBe(5);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('invalid_api_key');
  });
});
