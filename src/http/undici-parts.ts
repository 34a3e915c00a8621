// The parts of undici the client uses, without the rest of its entry point. undici's index.js
// also loads fetch, WebSocket, EventSource, cookies, the mock agents and the cache stores, and
// evaluating them was the largest single cost of a one-request command such as `me` after
// Node's own start (docs/performance.md, "me -o json against fetch()"). undici publishes no
// `exports` map, so these paths are its public layout; index.js attaches the request API to
// Dispatcher.prototype the same way. test/http/undici-parts.test.ts checks that the classes are
// the ones index.js exports.
import type { Dispatcher as DispatcherType } from 'undici';
// @ts-expect-error -- as above
import api from 'undici/lib/api/index.js';
// @ts-expect-error -- undici's internal modules have no type declarations; typed below.
import agent from 'undici/lib/dispatcher/agent.js';
// @ts-expect-error -- as above
import dispatcher from 'undici/lib/dispatcher/dispatcher.js';
// @ts-expect-error -- as above
import envHttpProxyAgent from 'undici/lib/dispatcher/env-http-proxy-agent.js';

Object.assign((dispatcher as { prototype: object }).prototype, api);

export const Agent = agent as typeof import('undici').Agent;
export const EnvHttpProxyAgent = envHttpProxyAgent as typeof import('undici').EnvHttpProxyAgent;
export type Dispatcher = DispatcherType;
