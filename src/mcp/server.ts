// `company-data mcp`: the MCP server over stdio, on the official SDK's (2.x) low-level Server,
// served by serveStdio in the era the client opens with: 2026-07-28 (server/discover) or 2025
// (initialize). The low-level Server (rather than McpServer) lets tools/list and tools/call follow
// the session's rules: a paid tool of a read-only server refused with how to allow it, invalid
// arguments a tool error carrying the problem's code, title and remedy, and a paid call answered
// with a question for the person (input_required). stdout carries protocol messages only.
import type { Context } from '../types.js';
import { version } from '../version.js';
import { askingOf } from './asking.js';
import { MAX_KEPT } from './kept.js';
import { ResourceNotFoundError, Server, StdioServerTransport, serveStdio } from './sdk.js';
import { type McpFlags, openSession, type Session, servingIO } from './session.js';
import { callTool, listTools } from './tools.js';
import { checkedLines } from './wire.js';

/** The protocol versions served: 2026-07-28 through server/discover, the others through initialize. */
export const PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18'];

const INSTRUCTIONS = `Company data: enrichment by domain, search, breakdowns and lookalikes.
The free tools (products, fields, account, spend) cost nothing. The paid tools (enrich, search,
breakdown, lookalike) charge credits, within caps the server enforces; estimate tells what a call
can cost, what the caps and the balance leave, and whether the user must confirm it. A call that
does not fit is refused before anything is bought, saying what would fit. A call above the
confirmation threshold asks the user (or answers confirmation_required with a token: ask the user,
and only if they agree call again with it). A refusal for credits (budget_exhausted,
insufficient_credits) will not change on retry: tell the user. Use fields to find filter names,
values and facets.`;

export async function serve(ctx: Context, flags: McpFlags): Promise<number> {
  const { stdin, stdout } = ctx.io;
  // Anything a command would print as data goes to stderr from now on.
  ctx.io = servingIO(ctx.io);
  const session = await openSession(ctx, flags);
  const inFlight = new Set<Promise<unknown>>();
  // Every call's own stop: the client's notifications/cancelled (the SDK's signal), or the end of
  // the session (stdin closed, SIGTERM, SIGINT), which stops them all.
  const stops = new Set<AbortController>();
  let ended = false;
  // One Server per connection, made when the client's first message says its era (serveStdio):
  // every one is built over the same session.
  const factory = () => {
    const server = serverOf(session);
    server.setRequestHandler('tools/call', async (request, context) => {
      const stop = new AbortController();
      const cancel = () => stop.abort();
      const { signal } = context.mcpReq;
      signal.addEventListener('abort', cancel, { once: true });
      if (ended || signal.aborted) stop.abort();
      stops.add(stop);
      const token = context.mcpReq._meta?.progressToken ?? request.params._meta?.progressToken;
      const progress =
        token === undefined
          ? undefined
          : (done: number, total: number | undefined, message?: string) => {
              const params = { progressToken: token, progress: done, total, message };
              context.mcpReq
                .notify({ method: 'notifications/progress', params })
                .catch((error: Error) => ctx.io.warn(`mcp: progress not sent: ${error.message}`));
            };
      const call = callTool(session, request.params.name, request.params.arguments, {
        signal: stop.signal,
        progress,
        asking: askingOf(context, server.getClientCapabilities()),
      });
      inFlight.add(call);
      try {
        return await call;
      } finally {
        inFlight.delete(call);
        stops.delete(stop);
        signal.removeEventListener('abort', cancel);
        // The operator's record (and a test's event): the call ended early, its purchases settled.
        if (stop.signal.aborted) {
          const why = signal.aborted ? 'cancelled by the client' : 'the session is ending';
          ctx.io.warn(
            `company-data mcp: ${request.params.name} stopped (${why}); no request was started after the stop, those in flight settled`,
          );
        }
      }
    });
    server.onerror = (error) => ctx.io.warn(`mcp: ${error.message}`);
    return server;
  };
  const stopAll = () => {
    ended = true;
    for (const stop of stops) stop.abort();
  };
  const input = checkedLines(stdin, stdout);
  const connection = serveStdio(factory, {
    transport: new StdioServerTransport(input.lines, stdout),
    onerror: (error) => ctx.io.warn(`mcp: ${error.message}`),
  });
  ctx.io.info(
    session.spending
      ? `company-data mcp: serving on stdio; paid tools on, this session may spend up to ${flags.allowSpend} credits; a call that can cost more than ${session.confirmAbove} asks the user first.`
      : 'company-data mcp: serving on stdio, read-only (paid tools off; --allow-spend <n> turns them on).',
  );
  if (ctx.io.isStdinTTY) {
    ctx.io.info(
      'stdin is a terminal: an MCP client starts this command and speaks JSON-RPC on stdin (see `company-data mcp --help`). Ctrl-C stops it.',
    );
  }
  // The client ends the session by closing stdin (or with SIGTERM; a person with Ctrl-C). The first
  // of these stops every call: no purchase starts, and the requests in flight settle and reach the
  // ledger before the store and the client close. Another signal meanwhile (the SDK's client
  // closes stdin, then sends SIGTERM 2 s later) stops the wait: every hold of a call still in
  // flight is in the store already (written before its request left), and closing the store turns
  // it into a possibly-charged ledger entry.
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  let ending: (() => void) | undefined;
  let stopping: (() => void) | undefined;
  const stop = new Promise<'stop'>((resolve) => {
    stopping = () => resolve('stop');
  });
  const onSignal = () => {
    if (ending) ending();
    else stopping?.();
  };
  for (const name of signals) process.on(name, onSignal);
  let code = 0;
  try {
    await new Promise<void>((resolve) => {
      ending = () => {
        ending = undefined;
        stopAll();
        resolve();
      };
      stdin.once('end', () => ending?.());
      stdin.once('close', () => ending?.());
    });
    if ((await Promise.race([drain(inFlight).then(() => 'drained' as const), stop])) === 'stop') {
      ctx.io.warn(
        'company-data mcp: stopped with calls in flight; their credits are kept as possibly charged',
      );
      code = 130;
    }
  } finally {
    for (const name of signals) process.off(name, onSignal);
  }
  // The answers are written; then the transport closes, and stdin is let go.
  await connection.close();
  input.detach();
  return code;
}

/** A server of the session: its name, instructions, versions and tools/list. */
function serverOf(session: Session): Server {
  const server = new Server(
    { name: 'company-data', title: 'Company Data Service', version: version() },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: INSTRUCTIONS,
      supportedProtocolVersions: PROTOCOL_VERSIONS,
    },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: await listTools(session) }));
  // The whole answers cut at the cap, kept for the session (src/mcp/kept.ts).
  server.setRequestHandler('resources/list', async () => ({
    resources: session.kept.list().map(({ uri, name, description }) => ({
      uri,
      name,
      description,
      mimeType: 'application/json',
    })),
  }));
  server.setRequestHandler('resources/read', async (request) => {
    const kept = session.kept.read(request.params.uri);
    if (!kept) {
      throw new ResourceNotFoundError(
        request.params.uri,
        `${request.params.uri}: no such answer in this session (whole answers are kept for the session that gave them, the last ${MAX_KEPT})`,
      );
    }
    return { contents: [{ uri: kept.uri, mimeType: 'application/json', text: kept.text }] };
  });
  return server;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Waits until no call is in flight: the messages read with the end of stdin are dispatched first
 * (a turn of the event loop), and the last answers are written before the transport closes.
 */
async function drain(inFlight: ReadonlySet<Promise<unknown>>): Promise<void> {
  do {
    await nextTurn();
    await Promise.allSettled([...inFlight]);
  } while (inFlight.size > 0);
  await nextTurn();
}
