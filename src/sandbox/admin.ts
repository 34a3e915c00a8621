// The sandbox-only control endpoints under /_sandbox/ (docs/contract.md, "Sandbox-only
// controls"). They need no key, are never faulted, delayed or logged: they exist to observe and
// steer the sandbox, not to behave like the service.
import type { IncomingMessage } from 'node:http';
import { readBody } from './body.js';
import { jsonReply, methodNotAllowed, problemReply, type Reply } from './respond.js';
import type { SandboxState } from './server.js';

const MAX_ADMIN_BODY = 64 * 1024;

export async function handleAdmin(
  req: IncomingMessage,
  method: string,
  path: string,
  state: SandboxState,
): Promise<Reply> {
  switch (path) {
    case '/_sandbox/faults':
      if (method === 'GET') return jsonReply(200, { faults: state.faults.list() });
      if (method === 'DELETE') return jsonReply(200, { cleared: state.faults.clear() });
      if (method === 'POST') return queueFault(req, state);
      return methodNotAllowed(method, path, ['GET', 'POST', 'DELETE']);
    case '/_sandbox/requests':
      if (method === 'GET') return jsonReply(200, { requests: state.log.entries() });
      if (method === 'DELETE') {
        state.log.clear();
        return jsonReply(200, { cleared: true });
      }
      return methodNotAllowed(method, path, ['GET', 'DELETE']);
    case '/_sandbox/balances':
      if (method === 'GET') return jsonReply(200, Object.fromEntries(state.balances));
      return methodNotAllowed(method, path, ['GET']);
    default:
      return problemReply(
        'not_found',
        'sandbox controls: /_sandbox/faults, /_sandbox/requests, /_sandbox/balances',
      );
  }
}

async function queueFault(req: IncomingMessage, state: SandboxState): Promise<Reply> {
  const body = await readBody(req, MAX_ADMIN_BODY);
  if (!body.ok) return problemReply('invalid_request', 'the body could not be read or is too large');
  let spec: unknown;
  try {
    spec = JSON.parse(body.text);
  } catch {
    return problemReply('invalid_request', 'the body is not valid JSON');
  }
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) {
    return problemReply(
      'invalid_request',
      'expected {"fault": "...", "times": N, "path": "/api/...", "method": "GET"}',
    );
  }
  const { fault, times, path, method } = spec as Record<string, unknown>;
  if (typeof fault !== 'string') return problemReply('invalid_request', 'fault must be a string');
  if (times !== undefined && typeof times !== 'number')
    return problemReply('invalid_request', 'times must be a number');
  if (path !== undefined && typeof path !== 'string')
    return problemReply('invalid_request', 'path must be a string');
  if (method !== undefined && typeof method !== 'string')
    return problemReply('invalid_request', 'method must be a string');
  try {
    return jsonReply(201, { queued: state.faults.add(fault, { times, path, method }) });
  } catch (error) {
    return problemReply('invalid_request', error instanceof Error ? error.message : String(error));
  }
}
