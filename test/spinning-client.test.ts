// The command layer's spinner around a Client: shown only for a slow call, updated on retries
// (through the request's onRetry, after the caller's own), cleared when the call settles, and
// never for a call that turns it off. The client underneath is a stand-in: what matters here is
// when the spinner starts, changes and stops.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createIO } from '../src/io.js';
import { Problem } from '../src/problem.js';
import { spinningClient } from '../src/spinning-client.js';
import type { ApiResponse, Client, IO, RequestOptions } from '../src/types.js';

const KEY = 'cd_test_secret_9f8e7d';
const config = {
  retries: { value: 2, source: 'flag' as const },
  apiKey: { value: KEY, source: 'environment' as const },
};

function recordingIO(events: string[]): IO {
  const sink = new Writable({ write: (_c, _e, done) => done() });
  return {
    ...createIO({ stdout: sink, stderr: sink, env: {} }),
    spinner(text) {
      events.push(`start ${text}`);
      return { update: (t) => events.push(`update ${t}`), stop: () => events.push('stop') };
    },
  };
}

const answer: ApiResponse = { status: 200, data: {}, headers: {}, credits: {}, attempts: 1 };

/** A client whose call takes `ms`, failing and retrying `retries` times on the way. */
function slowClient(ms: number, retries = 0): Client {
  return {
    async request<T>(options: RequestOptions) {
      for (let attempt = 1; attempt <= retries; attempt++) {
        await new Promise((r) => setTimeout(r, ms));
        await options.onRetry?.(new Problem({ code: 'search_unavailable' }), attempt, 0);
      }
      await new Promise((r) => setTimeout(r, ms));
      return answer as ApiResponse<T>;
    },
    lastCredits: {},
    close: async () => {},
  };
}

describe('spinningClient', () => {
  it('shows a spinner once a call is slow, with the path and never the key', async () => {
    const events: string[] = [];
    const client = spinningClient(slowClient(40), recordingIO(events), config, 5);
    await client.request({ method: 'GET', path: `/api/domains/${KEY}?x=1`, auth: true });
    expect(events).toEqual(['start Waiting for /api/domains/***…', 'stop']);
  });

  it('shows none for a call answered sooner than the delay, or one that turns it off', async () => {
    const events: string[] = [];
    const io = recordingIO(events);
    await spinningClient(slowClient(0), io, config, 200).request({
      method: 'GET',
      path: '/api/me',
      auth: true,
    });
    await spinningClient(slowClient(30), io, config, 1).request({
      method: 'GET',
      path: '/api/me',
      auth: true,
      spinner: false,
    });
    expect(events).toEqual([]);
  });

  it("says which attempt a retry is, after the caller's own onRetry", async () => {
    const events: string[] = [];
    const client = spinningClient(slowClient(30, 2), recordingIO(events), config, 5);
    await client.request({
      method: 'GET',
      path: '/api/me',
      auth: true,
      onRetry: (problem, attempt) => {
        events.push(`caller ${problem.code} ${attempt}`);
      },
    });
    expect(events).toEqual([
      'start Waiting for /api/me…',
      'update Retrying /api/me (attempt 2 of 3)…',
      'caller search_unavailable 1',
      'update Retrying /api/me (attempt 3 of 3)…',
      'caller search_unavailable 2',
      'stop',
    ]);
  });

  it('stops the spinner when the call fails', async () => {
    const events: string[] = [];
    const failing: Client = {
      ...slowClient(0),
      request: () =>
        new Promise((_, reject) => setTimeout(() => reject(new Problem({ code: 'timeout' })), 30)),
    };
    const client = spinningClient(failing, recordingIO(events), config, 5);
    await expect(client.request({ method: 'GET', path: '/api/me', auth: true })).rejects.toThrow();
    expect(events).toEqual(['start Waiting for /api/me…', 'stop']);
  });
});
