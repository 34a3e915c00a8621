// The service's own word on its rate limit, from the response headers of the IETF httpapi draft
// "RateLimit header fields for HTTP": `RateLimit-Policy: "default";q=100;w=10` (a quota of 100
// requests per 10 s) and `RateLimit: "default";r=50;t=30` (50 left, the window resets in 30 s);
// also the earlier drafts' `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`. The
// batch paces by them (src/pace.ts `observe`). Pure: no clock, no output.

export interface RateLimits {
  /** Requests allowed per window (`q`), and the window in seconds (`w`, default 1). */
  quota?: number;
  windowSeconds?: number;
  /** Requests left in the current window (`r`), and seconds until it resets (`t`). */
  remaining?: number;
  resetSeconds?: number;
}

/** Parameters of a structured-field list item: `"name";q=100;w=10` -> { q: 100, w: 10 }. */
function parameters(item: string): Record<string, number> {
  const out: Record<string, number> = {};
  const [head, ...rest] = item.split(';');
  // The earlier drafts' `RateLimit-Policy: 100;w=10`: the quota comes first, unnamed.
  if (/^\s*\d+\s*$/.test(head)) out.q = Number(head);
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const value = Number(part.slice(eq + 1).trim());
    if (Number.isFinite(value) && value >= 0) out[part.slice(0, eq).trim().toLowerCase()] = value;
  }
  return out;
}

function wholeNumber(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * What the headers (names in lower case) say, or undefined when they say nothing. With several
 * policies, the one allowing the fewest requests per second; with several `RateLimit` items, the
 * one with the fewest left.
 */
export function readRateLimits(headers: Record<string, string | undefined>): RateLimits | undefined {
  const out: RateLimits = {};
  const policy = headers['ratelimit-policy'];
  if (policy !== undefined) {
    let best: { q: number; w: number } | undefined;
    for (const item of policy.split(',')) {
      const p = parameters(item);
      if (!(p.q > 0)) continue;
      const w = p.w > 0 ? p.w : 1;
      if (!best || p.q / w < best.q / best.w) best = { q: p.q, w };
    }
    if (best) {
      out.quota = best.q;
      out.windowSeconds = best.w;
    }
  }
  const current = headers.ratelimit;
  if (current !== undefined) {
    for (const item of current.split(',')) {
      const p = parameters(item);
      if (p.r === undefined) continue;
      if (out.remaining === undefined || p.r < out.remaining) {
        out.remaining = p.r;
        out.resetSeconds = p.t;
      }
    }
  }
  // The earlier drafts: three headers of plain numbers.
  if (out.quota === undefined) {
    const limit = wholeNumber(headers['ratelimit-limit']);
    if (limit !== undefined && limit > 0) {
      out.quota = limit;
      out.windowSeconds ??= 1;
    }
  }
  if (out.remaining === undefined) {
    out.remaining = wholeNumber(headers['ratelimit-remaining']);
    out.resetSeconds = wholeNumber(headers['ratelimit-reset']);
  }
  for (const key of Object.keys(out) as Array<keyof RateLimits>) if (out[key] === undefined) delete out[key];
  return Object.keys(out).length === 0 ? undefined : out;
}
