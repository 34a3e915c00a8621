// The client takes undici's dispatchers from its own modules (src/http/undici-parts.ts) to load
// less than its entry point: they must be the very classes the entry point exports, with the
// request API index.js attaches.
import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { Agent, EnvHttpProxyAgent } from '../../src/http/undici-parts.js';

describe('undici parts', () => {
  it("are undici's own Agent and EnvHttpProxyAgent, with request() on them", async () => {
    expect(Agent).toBe(undici.Agent);
    expect(EnvHttpProxyAgent).toBe(undici.EnvHttpProxyAgent);
    const agent = new Agent();
    expect(typeof agent.request).toBe('function');
    expect(typeof agent.stream).toBe('function');
    await agent.close();
  });
});
