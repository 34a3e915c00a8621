// scripts/lazy-http2.cjs stands in for node:http2 inside dist/vendor/undici.cjs, so a batch does
// not load http2 (and tls and crypto with it) when it loads undici. It must give undici every
// constant undici reads, with node's values, and hand connect() to the real module.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const require = createRequire(import.meta.url);
const shim = require(join(ROOT, 'scripts/lazy-http2.cjs')) as {
  constants: Record<string, string | number>;
  connect: typeof http2.connect;
};
const clientH2 = readFileSync(join(ROOT, 'node_modules/undici/lib/dispatcher/client-h2.js'), 'utf8');

describe('the lazy node:http2 for undici', () => {
  it("has every constant undici's HTTP/2 client destructures, with node's values", () => {
    const block = /constants:\s*\{([^}]*)\}\s*\}\s*=\s*http2/.exec(clientH2);
    expect(block, 'the constants destructuring in client-h2.js').not.toBeNull();
    const names = block![1]
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      expect(shim.constants[name], name).toBeDefined();
      expect(shim.constants[name], name).toBe((http2.constants as Record<string, unknown>)[name]);
    }
  });

  it('is all undici uses of the module: the constants and connect()', () => {
    const uses = new Set([...clientH2.matchAll(/\bhttp2\.(\w+)/g)].map((m) => m[1]));
    expect([...uses]).toEqual(['connect']);
  });

  it('hands connect() to node:http2', () => {
    const session = shim.connect('http://127.0.0.1:9');
    session.on('error', () => {});
    try {
      expect(session.constructor.name).toBe('ClientHttp2Session');
      expect(typeof session.request).toBe('function');
    } finally {
      session.destroy();
    }
  });

  it('keeps http2, tls and crypto out of a process that loads the built undici', () => {
    const script = `
      const before = new Set(process.moduleLoadList);
      const { Pool } = require(${JSON.stringify(join(ROOT, 'dist/vendor/undici.cjs'))});
      new Pool('http://127.0.0.1:9').close();
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const loaded = JSON.parse(r.stdout) as string[];
    expect(loaded.some((m) => m.endsWith(' http'))).toBe(true);
    expect(loaded.filter((m) => /http2|tls|crypto/.test(m))).toEqual([]);
  });
});
