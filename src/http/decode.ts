// Compressed answers. company-data sends no Accept-Encoding, but a proxy on the way may compress
// an answer anyway; its body is decoded here before anything reads it as JSON.
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, inflateRaw } from 'node:zlib';
import { Problem } from '../problem.js';
import { excerpt } from './problems.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const inflateRawAsync = promisify(inflateRaw);
const brotliAsync = promisify(brotliDecompress);

const DECODERS: Record<string, (body: Buffer) => Promise<Buffer>> = {
  gzip: gunzipAsync,
  'x-gzip': gunzipAsync,
  // "deflate" is the zlib format, but some servers send a raw deflate stream under that name.
  deflate: (body) => inflateAsync(body).catch(() => inflateRawAsync(body)),
  br: brotliAsync,
};

/**
 * The body as sent before its Content-Encoding was applied. An encoding it cannot decode is a
 * problem naming it; a body that fails to decode is treated like a cut-off one (retryable).
 */
export async function decodeBody(
  body: Buffer,
  contentEncoding: string | undefined,
  status: number,
): Promise<Buffer> {
  if (!contentEncoding) return body;
  // Applied in the order listed, so undone in reverse.
  const codings = contentEncoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
    .reverse();
  for (const coding of codings) {
    const decode = DECODERS[coding];
    if (!decode)
      throw new Problem({
        code: 'unexpected_response',
        status,
        title: 'Unexpected response',
        detail: `The service answered HTTP ${status} compressed as "${excerpt(coding, 40)}", which company-data cannot decode (it reads gzip, deflate and br); something between you and the service (a proxy?) compressed it.`,
        retryable: false,
        source: 'server',
        hint: 'Have the proxy pass answers through uncompressed, or reach the service without it (NO_PROXY).',
      });
    if (body.length === 0) continue;
    try {
      body = await decode(body);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Problem({
        code: 'unexpected_response',
        status,
        title: 'Unexpected response',
        detail: `The response (HTTP ${status}) is marked ${coding} but could not be decoded${code ? ` (${code})` : ''}.`,
        retryable: status < 300 || status === 429 || status >= 500,
        source: 'server',
      });
    }
  }
  return body;
}
