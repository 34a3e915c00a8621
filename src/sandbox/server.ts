// The sandbox's HTTP layer on bare node:http: routing, authentication, which key may do what,
// balances and credit headers, rate limiting, faults, latency, the request log and a graceful
// close. What each endpoint computes lives in endpoints.ts and engine.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { handleAdmin } from './admin.js';
import { SANDBOX_KEYS } from './catalogs.js';
import type { Dataset } from './dataset.js';
import {
  catalogReply,
  domainOutcome,
  type KeyName,
  lookalikeOutcome,
  meOutcome,
  type Outcome,
  searchGetOutcome,
  searchPostOutcome,
  withEscapes,
} from './endpoints.js';
import type { Caller } from './engine.js';
import { FAULT_SYNTAX, type Fault, type FaultQueue, parseFault } from './faults.js';
import { LAYOUTS, type Layout, layOut } from './layouts.js';
import type { FixedWindowLimiter } from './rate-limit.js';
import { type RequestLog, type RequestLogEntry, redactSecrets } from './request-log.js';
import {
  html502Reply,
  jsonReply,
  methodNotAllowed,
  problemReply,
  type Reply,
  writeReply,
  writeTruncated,
} from './respond.js';
import { ALL_KEYS, KEY_NAMES, matchRoute, neededCapability, presentedKey, type Route } from './routes.js';

export interface SandboxState {
  dataset: Dataset;
  balances: Map<KeyName, number>;
  faults: FaultQueue;
  randomFault: (isSearch: boolean) => Fault | undefined;
  limiter: FixedWindowLimiter;
  log: RequestLog;
  latencyMs: number;
  rateLimit: number;
  /** The products catalog marks no product as default (the engine's default is unchanged). */
  catalogWithoutDefaults?: boolean;
  /** How answers are shaped where the spec leaves it open (src/sandbox/layouts.ts); flat if unset. */
  layout?: Layout;
}

type FaultChoice = { fault?: Fault; invalid?: string };

function chooseFault(
  state: SandboxState,
  req: IncomingMessage,
  route: Route,
  method: string,
  path: string,
): FaultChoice {
  const header = req.headers['x-sandbox-fault'];
  if (typeof header === 'string' && header.trim() !== '') {
    const fault = parseFault(header);
    return fault ? { fault } : { invalid: header };
  }
  const queued = state.faults.take(method, path);
  if (queued) return { fault: queued };
  if (!route.isPublic) return { fault: state.randomFault(route.name === 'search') };
  return {};
}

/** The answer a fault stands in for; undefined for the faults that alter a normal answer. */
function faultReply(fault: Fault, route: Route): Reply | undefined {
  const effect = fault.effect;
  if (effect.kind === 'html502') return html502Reply();
  if (effect.kind !== 'problem') return undefined;
  if (effect.code === 'domain_not_found' || effect.code === 'lookalike_not_available') {
    // These two codes are 200 bodies, not problems.
    const name = route.name === 'lookalike' ? 'seed' : 'domain';
    return jsonReply(200, {
      found: false,
      [name]: route.param,
      code: effect.code,
      ...(route.name === 'lookalike' ? { results: [] } : {}),
      credits: { charged: 0, ...(route.name === 'domains' ? { products: {} } : {}) },
    });
  }
  const headers =
    effect.retryAfterSeconds !== undefined ? { 'retry-after': String(effect.retryAfterSeconds) } : undefined;
  return problemReply(effect.code, `fault injected by the sandbox (${fault.name})`, headers);
}

export interface SandboxServer {
  server: Server;
  close(): Promise<void>;
}

/** How long a graceful close waits for in-flight requests before it cuts them off. */
const CLOSE_GRACE_MS = 3000;

export function createSandboxServer(state: SandboxState): SandboxServer {
  const layout = state.layout ?? LAYOUTS.flat;
  const sockets = new Set<Socket>();
  const busy = new Map<Socket, number>();
  // Delayed replies waiting for their time; a close that cuts them off fails them.
  const waits = new Set<{ timer?: NodeJS.Timeout; fail: () => void }>();
  let cutOff = false;
  let closing = false;

  /**
   * Resolves once performance.now() reads `deadline`, never before. A timer counts from the event
   * loop's cached clock, so it can fire a fraction of a millisecond early: then it is re-armed.
   */
  function waitUntil(deadline: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (cutOff) return reject(new Error('the sandbox closed'));
      const wait: { timer?: NodeJS.Timeout; fail: () => void } = {
        fail: () => reject(new Error('the sandbox closed before the reply was due')),
      };
      const check = () => {
        const left = deadline - performance.now();
        if (left > 0) wait.timer = setTimeout(check, Math.ceil(left));
        else {
          waits.delete(wait);
          resolve();
        }
      };
      waits.add(wait);
      check();
    });
  }

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = performance.now();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const rawQuery = q === -1 ? '' : url.slice(q + 1);
    const extra: Record<string, string> = closing ? { connection: 'close' } : {};

    if (path === '/_sandbox' || path.startsWith('/_sandbox/')) {
      writeReply(res, await handleAdmin(req, method, path, state), extra);
      return;
    }

    const presented = presentedKey(req);
    const keyName = presented ? (KEY_NAMES.get(presented.token) ?? null) : null;
    // An unknown token may be someone's real key: it is kept out of the log like the sandbox's own.
    const secrets =
      presented && !keyName ? [...ALL_KEYS, presented.token, encodeURIComponent(presented.token)] : ALL_KEYS;
    // Logged on arrival (status null until answered), so the log shows requests still in flight.
    const entry: RequestLogEntry = state.log.add({
      method,
      path: redactSecrets(path, secrets),
      query: redactSecrets(rawQuery, secrets),
      auth: presented?.scheme ?? null,
      key_name: keyName,
      status: null,
      fault: null,
      content_type: req.headers['content-type'] ?? null,
      body_bytes: 0,
    });
    const params = new URLSearchParams(rawQuery);
    const route = matchRoute(path);
    let outcome: Outcome;
    let fault: Fault | undefined;
    if (!route) {
      outcome = { reply: problemReply('not_found', `there is no endpoint at ${entry.path}`), charged: 0 };
    } else if (!route.allow.includes(method)) {
      outcome = { reply: methodNotAllowed(method, path, route.allow), charged: 0 };
    } else {
      const choice = chooseFault(state, req, route, method, path);
      fault = choice.fault;
      entry.fault = fault?.name ?? null;
      if (choice.invalid !== undefined) {
        outcome = {
          reply: problemReply('invalid_request', `x-sandbox-fault: unknown fault; expected ${FAULT_SYNTAX}`),
          charged: 0,
        };
      } else if (fault?.effect.kind === 'reset') {
        req.socket.destroy();
        return;
      } else {
        const replaced = fault ? faultReply(fault, route) : undefined;
        outcome = replaced ? { reply: replaced, charged: 0 } : await serve(route, req, params, keyName);
        if (fault?.effect.kind === 'escape') outcome = withEscapes(outcome);
        outcome = inLayout(route, outcome, keyName);
      }
    }
    entry.body_bytes = outcome.bodyBytes ?? 0;

    const truncate = fault?.effect.kind === 'truncate';
    if (route && !route.isPublic && keyName) {
      // A truncated answer never arrives whole, so it is not billed.
      const charged = truncate ? 0 : outcome.charged;
      const balance = (state.balances.get(keyName) ?? 0) - charged;
      state.balances.set(keyName, balance);
      extra[layout.chargedHeader] = String(charged);
      extra[layout.remainingHeader] = String(balance);
    }

    // --latency is counted from the request's arrival, as a network's would be: the time spent
    // answering is part of it, not added to it.
    const extraDelay = fault?.effect.kind === 'delay' ? fault.effect.ms : 0;
    if (state.latencyMs > 0 || extraDelay > 0) {
      try {
        await waitUntil(arrived + state.latencyMs + extraDelay);
      } catch {
        req.socket.destroy();
        return;
      }
      if (closing) extra.connection = 'close';
    }
    entry.status = truncate ? 200 : outcome.reply.status;
    if (truncate) writeTruncated(res, outcome.reply, extra);
    else writeReply(res, outcome.reply, extra);
  }

  // The catalogs never change during a run: laid out once per server.
  const laidOutCatalogs = new Map<string, Reply>();

  /**
   * A 200 JSON answer rewritten in the server's layout; what it charges may change (a layout
   * pricing searches by rows), never beyond the key's balance.
   */
  function inLayout(route: Route, outcome: Outcome, keyName: KeyName | null): Outcome {
    if (layout.name === 'flat' || outcome.reply.status !== 200) return outcome;
    if (!outcome.reply.contentType.startsWith('application/json')) return outcome;
    if (route.isPublic) {
      let reply = laidOutCatalogs.get(route.name);
      if (!reply) {
        const json = JSON.parse(outcome.reply.body) as Record<string, unknown>;
        reply = jsonReply(200, layOut(layout, route.name, json, 0, 0).body);
        laidOutCatalogs.set(route.name, reply);
      }
      return { ...outcome, reply };
    }
    const json = outcome.json ?? (JSON.parse(outcome.reply.body) as Record<string, unknown>);
    const balance = keyName ? (state.balances.get(keyName) ?? 0) : 0;
    const laid = layOut(layout, route.name, json, outcome.charged, balance);
    if (laid.charged > balance) return { reply: problemReply('insufficient_credits'), charged: 0 };
    return { ...outcome, reply: jsonReply(200, laid.body), charged: laid.charged };
  }

  async function serve(
    route: Route,
    req: IncomingMessage,
    params: URLSearchParams,
    keyName: KeyName | null,
  ): Promise<Outcome> {
    if (route.isPublic)
      return {
        reply: catalogReply(route.name as 'products' | 'fields' | 'errors', state.catalogWithoutDefaults),
        charged: 0,
      };
    if (!keyName) return { reply: problemReply('invalid_api_key'), charged: 0 };
    const limit = state.limiter.take(keyName);
    if (!limit.allowed) {
      return {
        reply: problemReply('rate_limited', `more than ${state.rateLimit} requests in one second`, {
          'retry-after': String(limit.retryAfterSeconds),
        }),
        charged: 0,
      };
    }
    const key = SANDBOX_KEYS[keyName];
    const needed = neededCapability(route, params);
    if (needed && !key.capabilities.includes(needed)) {
      return { reply: problemReply('api_key_restricted', `this key may not use ${needed}`), charged: 0 };
    }
    const balance = state.balances.get(keyName) ?? 0;
    const caller = { plan: key.plan, balance };
    const outcome = await endpoint(route, req, params, keyName, caller);
    // The engine checks the balance itself; this guard keeps a balance from ever going negative.
    if (outcome.charged > balance) {
      return { reply: problemReply('insufficient_credits'), charged: 0, bodyBytes: outcome.bodyBytes };
    }
    return outcome;
  }

  function endpoint(
    route: Route,
    req: IncomingMessage,
    params: URLSearchParams,
    keyName: KeyName,
    caller: Caller,
  ): Outcome | Promise<Outcome> {
    switch (route.name) {
      case 'me':
        return meOutcome(keyName, caller.balance, state.rateLimit);
      case 'domains':
        return domainOutcome(state.dataset, route.param, params, caller);
      case 'lookalike':
        return lookalikeOutcome(state.dataset, route.param, params, caller);
      default:
        return req.method === 'POST'
          ? searchPostOutcome(state.dataset, req, caller)
          : searchGetOutcome(state.dataset, params, caller);
    }
  }

  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
      if (closing && left <= 0) socket.destroy();
    });
    answer(req, res).catch((error: unknown) => {
      // A crash of the sandbox itself still answers as the service would, with a problem.
      if (res.headersSent) {
        socket.destroy();
        return;
      }
      const detail = `sandbox bug: ${error instanceof Error ? error.message : String(error)}`;
      writeReply(res, problemReply('internal_error', detail), { connection: 'close' });
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      const grace = setTimeout(() => {
        cutOff = true;
        for (const wait of waits) {
          clearTimeout(wait.timer);
          wait.fail();
        }
        waits.clear();
        for (const socket of sockets) socket.destroy();
      }, CLOSE_GRACE_MS);
      server.close(() => {
        clearTimeout(grace);
        resolve();
      });
      for (const socket of sockets) if (!busy.has(socket)) socket.destroy();
    });
    return closed;
  }

  return { server, close };
}
