// `company-data sandbox` as users and scripts run it: the built binary, its JSON handshake line,
// real requests, and a clean exit 0 on SIGTERM / SIGINT. Needs `npm run build` first.
import { type AddressInfo, createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { call } from '../helpers/sandbox.js';

interface Handshake {
  url: string;
  keys: Record<'full' | 'restricted' | 'free' | 'empty', string>;
}

function startSandboxCli(args: string[]) {
  // A stuck child must not outlive the test run.
  const run = startCli(['sandbox', '--port', '0', '--companies', '300', ...args], {
    input: 'ignore',
    timeoutMs: 25_000,
  });
  const stdout = run.child.stdout as NonNullable<typeof run.child.stdout>;
  const handshake = new Promise<Handshake>((resolve, reject) => {
    createInterface({ input: stdout }).once('line', (line) => resolve(JSON.parse(line) as Handshake));
    run.child.once('exit', (code) =>
      reject(new Error(`sandbox exited (${code}) before listening: ${run.output().stderr}`)),
    );
  });
  const exited = run.done.then((r) => [r.code, r.signal] as const);
  return { child: run.child, handshake, exited, output: run.output };
}

describe('company-data sandbox', () => {
  it('prints one JSON line with url and keys, serves, and exits 0 on SIGTERM', async () => {
    const run = startSandboxCli(['--seed', '7']);
    const hello = await run.handshake;
    expect(hello.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(hello.keys).sort()).toEqual(['empty', 'free', 'full', 'restricted']);
    const me = await call(hello.url, '/api/me', { key: hello.keys.full });
    expect(me.json).toMatchObject({ plan: 'pro', key_name: 'full' });
    const found = await call(hello.url, '/api/domains/acme-shoes.com', { key: hello.keys.full });
    expect(found.json).toMatchObject({ found: true, domain: 'acme-shoes.com' });
    run.child.kill('SIGTERM');
    const [code, signal] = await run.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const { stdout, stderr } = run.output();
    // Exactly the handshake line on stdout; the talk went to stderr.
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`listening on ${hello.url}`);
    expect(stderr).toContain('seed 7');
    expect(stderr).toContain(hello.keys.restricted);
    expect(stderr).toMatch(/SIGTERM/);
  });

  it('closes on SIGINT with an idle keep-alive client connected, exit 0', async () => {
    const run = startSandboxCli(['--latency', '5']);
    const hello = await run.handshake;
    const { Agent, request } = await import('undici');
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      const res = await request(`${hello.url}/api/products`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      await res.body.text();
      run.child.kill('SIGINT');
      const [code] = await run.exited;
      expect(code).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it('rejects bad options with exit 2 and documents itself in --help', async () => {
    const bad = await runCli(['sandbox', '--fault-rate', '2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--fault-rate must be a number between 0 and 1');
    const help = await runCli(['sandbox', '--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--host',
      '--port',
      '--seed',
      '--companies',
      '--latency',
      '--rate-limit',
      '--fault-rate',
    ])
      expect(help.stdout).toContain(flag);
    expect(help.stdout).toContain('Examples:');
  });

  it('a port already in use is a usage error (exit 2), not a crash', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = blocker.address() as AddressInfo;
      const r = await runCli(['sandbox', '--port', String(port), '--companies', '100']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('EADDRINUSE');
      expect(r.stdout).toBe('');
    } finally {
      blocker.close();
    }
  });
});
