// The spinner of a call that keeps a person waiting, drawn by the command layer (gh starts its
// progress indicator in the command, never in the HTTP client). It wraps a Client: each request
// without `spinner: false` shows a spinner once it has taken SPINNER_DELAY_MS, says which attempt
// it is on when it retries, and clears it when the call settles.
import { makeRedactor } from './http/problems.js';
import { oneLine } from './text.js';
import type { ApiResponse, Client, Config, IO, RequestOptions, Spinner } from './types.js';

/** A call answered sooner than this shows no spinner at all. */
export const SPINNER_DELAY_MS = 300;

export function spinningClient(
  client: Client,
  io: IO,
  config: Pick<Config, 'retries' | 'apiKey'>,
  delayMs = SPINNER_DELAY_MS,
): Client {
  const attempts = Math.max(0, Math.floor(config.retries.value) || 0) + 1;
  const redact = makeRedactor(config.apiKey?.value);
  return {
    async request<T>(options: RequestOptions): Promise<ApiResponse<T>> {
      if (options.spinner === false) return client.request<T>(options);
      const query = options.path.indexOf('?');
      const where = oneLine(redact(query === -1 ? options.path : options.path.slice(0, query)));
      let text = `Waiting for ${where}…`;
      let spinner: Spinner | undefined;
      const timer = setTimeout(() => {
        spinner = io.spinner(text);
      }, delayMs);
      const onRetry: RequestOptions['onRetry'] = (problem, attempt, delay) => {
        text = `Retrying ${where} (attempt ${attempt + 1} of ${attempts})…`;
        spinner?.update(text);
        return options.onRetry?.(problem, attempt, delay);
      };
      try {
        return await client.request<T>({ ...options, onRetry });
      } finally {
        clearTimeout(timer);
        spinner?.stop();
      }
    },
    get lastCredits() {
      return client.lastCredits;
    },
    watchRateLimits: client.watchRateLimits && ((listener) => client.watchRateLimits!(listener)),
    close: () => client.close(),
  };
}
