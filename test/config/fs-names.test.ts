import { describe, expect, it } from 'vitest';
import { shortHash, tempSuffix } from '../../src/fs-names.js';

describe('shortHash', () => {
  it('is the 64-bit FNV-1a of the UTF-8 bytes, as 16 hex digits', () => {
    // Published FNV-1a 64 test vectors.
    expect(shortHash('')).toBe('cbf29ce484222325');
    expect(shortHash('a')).toBe('af63dc4c8601ec8c');
    expect(shortHash('foobar')).toBe('85944171f73967e8');
  });

  it('tells base URLs apart and pads to 16 digits', () => {
    const a = shortHash('https://api.example.com');
    const b = shortHash('https://api.example.com/');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(shortHash('é')).not.toBe(shortHash('e'));
  });
});

describe('tempSuffix', () => {
  it('differs between calls in one process and names the pid', () => {
    const names = new Set(Array.from({ length: 100 }, () => tempSuffix()));
    expect(names.size).toBe(100);
    for (const name of names) expect(name.startsWith(`${process.pid}.`)).toBe(true);
  });
});
