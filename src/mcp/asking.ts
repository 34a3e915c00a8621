// What the client of one tools/call can ask its person, read from the request as each protocol era
// carries it: under 2026-07-28 every request declares the client's capabilities in its `_meta`
// envelope; a 2025 client declared them once, at initialize. The answers a retried call brings
// back (`inputResponses`, with the `requestState` echoed) are the SDK's, lifted out of the params.
import type { Asking } from './gate.js';

/** The key of the client's capabilities in a 2026-07-28 request's `_meta` envelope. */
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

type Capabilities = { elicitation?: { form?: object; url?: object } } | undefined;

/**
 * Whether declared capabilities include form elicitation: `elicitation: {}` declares form mode
 * (the specification's default when no mode is named), `elicitation: { form: {} }` names it.
 */
export function elicitsForms(capabilities: Capabilities): boolean {
  const elicitation = capabilities?.elicitation;
  if (!elicitation) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** The request context as the SDK hands it to a tools/call handler: the members read here. */
export interface CallContext {
  mcpReq: {
    envelope?: object;
    inputResponses?: Record<string, unknown>;
    requestState: <T = unknown>() => T | undefined;
  };
}

/**
 * What this call's client can ask, and what it brought back. `initialized` is what the client
 * declared at initialize (a 2025 client); a 2026-07-28 request's envelope takes its place.
 */
export function askingOf(context: CallContext, initialized: Capabilities): Asking {
  const envelope = context.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = (envelope?.[CLIENT_CAPABILITIES] as Capabilities) ?? initialized;
  const state = context.mcpReq.requestState<unknown>();
  return {
    canElicit: elicitsForms(declared),
    ...(context.mcpReq.inputResponses ? { responses: context.mcpReq.inputResponses } : {}),
    ...(typeof state === 'string' ? { state } : {}),
  };
}
