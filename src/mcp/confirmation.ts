// Confirmation tokens: the proof that a person agreed to one paid call. A token names the tool, the
// call's arguments (normalised) and its worst case in credits, expires after TOKEN_TTL_MS and buys
// once. It is sealed with an HMAC under a secret drawn at random when the session starts, so a
// token cannot be made or altered by the client, and dies with the session. The same token is the
// `requestState` of an elicitation (src/mcp/gate.ts): the SDK echoes it back with the person's
// answer, and the call is redeemed against the arguments it arrives with.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a token stays good: time for a person to read the question and answer it. */
export const TOKEN_TTL_MS = 10 * 60_000;

/** What a token is bound to. */
export interface Confirmable {
  tool: string;
  /** The call's arguments, normalised (see canonicalArguments); `confirmation` left out. */
  args: unknown;
  /** The most credits the call can cost, as the session priced it. */
  worstCase: number;
}

export interface Issued {
  token: string;
  /** When the token stops being accepted (ms since the epoch). */
  expiresAt: number;
}

/** Why a token was not accepted. */
export type Rejection = 'malformed' | 'altered' | 'expired' | 'other_call' | 'used';

export type Redemption = { ok: true } | { ok: false; why: Rejection };

interface Payload {
  /** Digest of tool, arguments and worst case. */
  c: string;
  /** Expiry, ms since the epoch. */
  e: number;
  /** Single-use id. */
  n: string;
}

/** JSON with object keys in sorted order: the same arguments give the same text whatever their order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== 'object' || Array.isArray(member)) return member;
    const record = member as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, record[key]]),
    );
  });
}

export class Confirmations {
  private readonly secret = randomBytes(32);
  /** Tokens redeemed (by their id) until they expire: each buys once. */
  private readonly redeemed = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = TOKEN_TTL_MS,
  ) {}

  issue(call: Confirmable): Issued {
    const expiresAt = this.now() + this.ttlMs;
    const payload: Payload = { c: this.digest(call), e: expiresAt, n: randomBytes(12).toString('base64url') };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { token: `${body}.${this.mac(body)}`, expiresAt };
  }

  /**
   * Accepts `token` for `call` once: it must be sealed by this session, unexpired, unused, and name
   * the same tool, arguments and worst case. Redeeming marks it used whatever the call then does.
   */
  redeem(token: string, call: Confirmable): Redemption {
    const [body, mac, extra] = token.split('.');
    if (!body || !mac || extra !== undefined) return { ok: false, why: 'malformed' };
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { ok: false, why: 'altered' };
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    const now = this.now();
    this.forgetExpired(now);
    if (now >= payload.e) return { ok: false, why: 'expired' };
    if (this.redeemed.has(payload.n)) return { ok: false, why: 'used' };
    if (payload.c !== this.digest(call)) return { ok: false, why: 'other_call' };
    this.redeemed.set(payload.n, payload.e);
    return { ok: true };
  }

  private digest(call: Confirmable): string {
    return createHmac('sha256', this.secret)
      .update(canonicalJson([call.tool, call.args, call.worstCase]))
      .digest('base64url');
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(`token\0${body}`).digest('base64url');
  }

  /** An expired token is refused for its expiry: its id need not be kept. */
  private forgetExpired(now: number): void {
    for (const [id, expiresAt] of this.redeemed) if (now >= expiresAt) this.redeemed.delete(id);
  }
}

/** What a person or an agent reads when a token is refused. */
export function rejectionText(why: Rejection): string {
  switch (why) {
    case 'malformed':
      return 'the confirmation is not a token this server issued';
    case 'altered':
      return 'the confirmation token was altered, or was issued by another session of the server';
    case 'expired':
      return `the confirmation token expired (tokens last ${TOKEN_TTL_MS / 60_000} minutes)`;
    case 'used':
      return 'the confirmation token was used already: each token buys once';
    case 'other_call':
      return 'the confirmation token was issued for another call (other arguments, or another worst case)';
  }
}
