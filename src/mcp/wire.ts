// The lines of stdin before the SDK's stdio transport reads them. The SDK skips a line that is not
// JSON without a word (its ReadBuffer drops the SyntaxError), and reports a JSON value that is not
// a JSON-RPC message only to onerror: the client that sent it waits for an answer that never
// comes. JSON-RPC 2.0 says both get an error response, so they are answered here: -32700 (parse
// error) for a line that is not JSON, -32600 (invalid request) for JSON that is not a message.
// Every other line goes on to the transport unchanged, in order.
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { parseJSONRPCMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from './sdk.js';

type JsonRpcId = string | number | null;

function errorLine(id: JsonRpcId, code: number, message: string): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
}

/** The id of a JSON value that is not a valid message, when it names one JSON-RPC allows. */
function idOf(value: unknown): JsonRpcId {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** The answer a line needs before any handler sees it, or undefined when it is a message. */
export function answerForLine(line: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return errorLine(null, -32700, `Parse error: ${(error as Error).message}`);
  }
  try {
    parseJSONRPCMessage(value);
    return undefined;
  } catch {
    return errorLine(
      idOf(value),
      -32600,
      'Invalid Request: not a JSON-RPC 2.0 request, notification or response (one JSON object per line)',
    );
  }
}

/** The lines of stdin that are messages, for the SDK's transport, until `detach()`. */
export interface CheckedLines {
  lines: Readable;
  /** Stops reading stdin and ends `lines`: once the session has answered what it will. */
  detach(): void;
}

/**
 * The stream the SDK's transport reads in place of `stdin`: its whole lines that are messages.
 * Answers to the others are written to `stdout` here. The end of stdin does not end it: the SDK's
 * transport would close at once and leave the calls in flight unanswered, where the server stops
 * them and answers with what they bought (src/mcp/server.ts), then detaches.
 */
export function checkedLines(stdin: Readable, stdout: Writable): CheckedLines {
  const lines = new PassThrough();
  let pending = '';
  const take = (line: string) => {
    if (line.trim() === '') return;
    const answer = answerForLine(line);
    if (answer === undefined) lines.write(`${line}\n`);
    else stdout.write(answer);
  };
  const onData = (chunk: string) => {
    pending += chunk;
    let end = pending.indexOf('\n');
    while (end !== -1) {
      const line = pending.slice(0, end).replace(/\r$/, '');
      pending = pending.slice(end + 1);
      take(line);
      end = pending.indexOf('\n');
    }
    // A line longer than the transport accepts goes to it as it is: the transport refuses it.
    if (pending.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      lines.write(pending);
      pending = '';
    }
  };
  // The last line, cut off by the end of stdin, is answered as any other.
  const onEnd = () => {
    const last = pending.replace(/\r$/, '');
    pending = '';
    take(last);
  };
  const onError = (error: Error) => lines.destroy(error);
  stdin.setEncoding('utf8');
  stdin.on('data', onData);
  stdin.once('end', onEnd);
  stdin.once('error', onError);
  return {
    lines,
    detach() {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onError);
      if (stdin.listenerCount('data') === 0) stdin.pause();
      if (!lines.writableEnded) lines.end();
    },
  };
}
