// `company-data mcp`: the MCP server over stdio, on the official SDK's low-level Server. The
// low-level Server (rather than McpServer) lets tools/list and tools/call follow the session's
// rules: paid tools listed only with --allow-spend, a call to one refused as a tool error that
// says how to allow it, and invalid arguments a tool error carrying the problem's code, title and
// remedy (McpServer answers those with its own text). stdout carries protocol messages only.
import type { Context } from '../types.js';
import { version } from '../version.js';
import { CallToolRequestSchema, ListToolsRequestSchema, Server, StdioServerTransport } from './sdk.js';
import { type McpFlags, openSession, servingIO } from './session.js';
import { callTool, listTools } from './tools.js';

const INSTRUCTIONS = `Company data: enrichment by domain, search, breakdowns and lookalikes.
The free tools (products, fields, account, spend) cost nothing. The paid tools (enrich, search,
breakdown, lookalike) charge credits, within caps the server enforces; estimate tells what a call
can cost and what the caps leave. A refusal for credits (budget_exhausted, insufficient_credits)
will not change on retry: tell the user. Use fields to find filter names, values and facets.`;

export async function serve(ctx: Context, flags: McpFlags): Promise<number> {
  const { stdin, stdout } = ctx.io;
  // Anything a command would print as data goes to stderr from now on.
  ctx.io = servingIO(ctx.io);
  const session = await openSession(ctx, flags);
  const server = new Server(
    { name: 'company-data', title: 'Company Data Service', version: version() },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  const inFlight = new Set<Promise<unknown>>();
  // Every call's own stop: the client's notifications/cancelled (the SDK's signal), or the end of
  // the session (stdin closed, SIGTERM, SIGINT), which stops them all.
  const stops = new Set<AbortController>();
  let ended = false;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listTools(session) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const stop = new AbortController();
    const cancel = () => stop.abort();
    extra.signal.addEventListener('abort', cancel, { once: true });
    if (ended || extra.signal.aborted) stop.abort();
    stops.add(stop);
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (done: number, total: number | undefined, message?: string) => {
            const params = { progressToken: token, progress: done, total, message };
            extra
              .sendNotification({ method: 'notifications/progress', params })
              .catch((error: Error) => ctx.io.warn(`mcp: progress not sent: ${error.message}`));
          };
    const call = callTool(session, request.params.name, request.params.arguments, {
      signal: stop.signal,
      progress,
    });
    inFlight.add(call);
    try {
      return await call;
    } finally {
      inFlight.delete(call);
      stops.delete(stop);
      extra.signal.removeEventListener('abort', cancel);
      // The operator's record (and a test's event): the call ended early, its purchases settled.
      if (stop.signal.aborted) {
        const why = extra.signal.aborted ? 'cancelled by the client' : 'the session is ending';
        ctx.io.warn(
          `company-data mcp: ${request.params.name} stopped (${why}); no request was started after the stop, those in flight settled`,
        );
      }
    }
  });
  const stopAll = () => {
    ended = true;
    for (const stop of stops) stop.abort();
  };
  server.onerror = (error) => ctx.io.warn(`mcp: ${error.message}`);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport(stdin, stdout));
  ctx.io.info(
    session.spending
      ? `company-data mcp: serving on stdio; paid tools on, this session may spend up to ${flags.allowSpend} credits.`
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
  try {
    await new Promise<void>((resolve) => {
      ending = () => {
        ending = undefined;
        stopAll();
        resolve();
      };
      stdin.once('end', () => ending?.());
      stdin.once('close', () => ending?.());
      void closed.then(() => ending?.());
    });
    if ((await Promise.race([drain(inFlight).then(() => 'drained' as const), stop])) === 'stop') {
      ctx.io.warn(
        'company-data mcp: stopped with calls in flight; their credits are kept as possibly charged',
      );
      return 130;
    }
  } finally {
    for (const name of signals) process.off(name, onSignal);
  }
  await server.close();
  return 0;
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
