// The lines of `company-data mcp`'s stdin before the SDK reads them (src/mcp/wire.ts): a line that
// is not JSON is answered -32700, JSON that is not a JSON-RPC message -32600, and every message
// goes on unchanged and in order, a chunk boundary anywhere; the lines end when the server lets go. Through the built server:
// test/mcp/protocol.test.ts.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { answerForLine, checkedLines } from '../../src/mcp/wire.js';

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

async function through(chunks: string[]): Promise<{ passed: string; answered: string }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let answered = '';
  stdout.on('data', (chunk: Buffer) => {
    answered += chunk.toString();
  });
  const { lines, detach } = checkedLines(stdin, stdout);
  let passed = '';
  lines.on('data', (chunk: Buffer) => {
    passed += chunk.toString();
  });
  const ended = new Promise((resolve) => lines.on('end', resolve));
  const stdinEnded = new Promise((resolve) => stdin.on('end', resolve));
  for (const chunk of chunks) stdin.write(chunk);
  stdin.end();
  await stdinEnded;
  // The end of stdin does not end the lines: the server detaches once it has answered.
  expect((lines as PassThrough).writableEnded).toBe(false);
  detach();
  await ended;
  return { passed, answered };
}

describe('the lines of stdin', () => {
  it('answer a line that is not JSON with -32700 and JSON that is no message with -32600', () => {
    expect(JSON.parse(answerForLine('{"jsonrpc":"2.0","id":4,"meth') ?? '')).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error: /) },
    });
    expect(JSON.parse(answerForLine('{"jsonrpc":"2.0","id":7,"result":1,"error":2}') ?? '')).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32600,
        message:
          'Invalid Request: not a JSON-RPC 2.0 request, notification or response (one JSON object per line)',
      },
    });
    expect(JSON.parse(answerForLine('[1,2]') ?? '').error.code).toBe(-32600);
    expect(JSON.parse(answerForLine('{"id":{"x":1},"method":5}') ?? '').id).toBeNull();
    expect(answerForLine(PING)).toBeUndefined();
    expect(answerForLine(INITIALIZED)).toBeUndefined();
  });

  it('pass every message on in order, whatever the chunks, and answer the others', async () => {
    const text = `${PING}\r\n\n{"jsonrpc":"2.0","id":2,"meth\n${INITIALIZED}\n[3]\n{"jsonrpc":"2.0","id":5,`;
    // Every split of the text into two chunks gives the same lines.
    for (let at = 0; at <= text.length; at += 7) {
      const { passed, answered } = await through([text.slice(0, at), text.slice(at)]);
      expect(passed, `split at ${at}`).toBe(`${PING}\n${INITIALIZED}\n`);
      expect(
        answered
          .trim()
          .split('\n')
          .map((line) => [JSON.parse(line).id, JSON.parse(line).error.code]),
        `split at ${at}`,
      ).toEqual([
        [null, -32700],
        [null, -32600],
        // The last line, cut off by the end of stdin.
        [null, -32700],
      ]);
    }
  });
});
