// The confirmation tokens of `company-data mcp` (src/mcp/confirmation.ts): a token buys the call it
// was issued for, once, before it expires; an altered, reused, expired or foreign token does not.
// The whole flow through the built server: test/mcp/confirm.test.ts.
import { describe, expect, it } from 'vitest';
import { Confirmations, canonicalJson, rejectionText, TOKEN_TTL_MS } from '../../src/mcp/confirmation.js';

const CALL = { tool: 'enrich', args: { domains: ['a.com', 'b.com'], include: ['country'] }, worstCase: 6 };

function clock(start = 1_800_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('confirmation tokens', () => {
  it('buy the call they were issued for, once', () => {
    const time = clock();
    const confirmations = new Confirmations(time.now);
    const issued = confirmations.issue(CALL);
    expect(issued.expiresAt).toBe(time.now() + TOKEN_TTL_MS);
    // The same arguments in another order are the same call.
    const reordered = { ...CALL, args: { include: ['country'], domains: ['a.com', 'b.com'] } };
    expect(confirmations.redeem(issued.token, reordered)).toEqual({ ok: true });
    expect(confirmations.redeem(issued.token, CALL)).toEqual({ ok: false, why: 'used' });
  });

  it('refuse another call: other arguments, another tool, another worst case', () => {
    const confirmations = new Confirmations(clock().now);
    const others = [
      { ...CALL, args: { ...CALL.args, domains: ['a.com', 'b.com', 'c.com'] } },
      { ...CALL, args: { ...CALL.args, domains: ['b.com', 'a.com'] } },
      { ...CALL, tool: 'lookalike' },
      { ...CALL, worstCase: 7 },
    ];
    for (const other of others) {
      const { token } = confirmations.issue(CALL);
      expect(confirmations.redeem(token, other), JSON.stringify(other)).toEqual({
        ok: false,
        why: 'other_call',
      });
      // Refused for another call, it still buys its own.
      expect(confirmations.redeem(token, CALL)).toEqual({ ok: true });
    }
  });

  it('refuse an altered token, one of another session, and text that is no token', () => {
    const time = clock();
    const confirmations = new Confirmations(time.now);
    const { token } = confirmations.issue(CALL);
    const [body, mac] = token.split('.');
    // A body claiming a later expiry, sealed with the old MAC.
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const later = Buffer.from(JSON.stringify({ ...payload, e: payload.e + 3_600_000 })).toString('base64url');
    expect(confirmations.redeem(`${later}.${mac}`, CALL)).toEqual({ ok: false, why: 'altered' });
    const flipped = `${body}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    expect(confirmations.redeem(flipped, CALL)).toEqual({ ok: false, why: 'altered' });
    const other = new Confirmations(time.now).issue(CALL).token;
    expect(confirmations.redeem(other, CALL)).toEqual({ ok: false, why: 'altered' });
    for (const text of ['', 'abc', 'a.b.c', '.']) {
      expect(confirmations.redeem(text, CALL), text).toEqual({ ok: false, why: 'malformed' });
    }
    // None of those spent the real token.
    expect(confirmations.redeem(token, CALL)).toEqual({ ok: true });
  });

  it('expire after their time, and are refused for it', () => {
    const time = clock();
    const confirmations = new Confirmations(time.now);
    const first = confirmations.issue(CALL);
    const second = confirmations.issue(CALL);
    time.advance(TOKEN_TTL_MS - 1);
    expect(confirmations.redeem(first.token, CALL)).toEqual({ ok: true });
    time.advance(1);
    expect(confirmations.redeem(second.token, CALL)).toEqual({ ok: false, why: 'expired' });
    // A used token past its expiry is refused for its expiry.
    expect(confirmations.redeem(first.token, CALL)).toEqual({ ok: false, why: 'expired' });
  });

  it('say why they are refused', () => {
    expect(rejectionText('used')).toBe('the confirmation token was used already: each token buys once');
    expect(rejectionText('expired')).toBe('the confirmation token expired (tokens last 10 minutes)');
  });

  it('read arguments in a canonical order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    );
  });
});
