// Shared interfaces between the layers (DESIGN.md: command -> api -> http -> api adapter -> output).
// Implementations: src/io.ts (IO), src/config.ts (Config), src/http/client.ts (Client).
import type { Readable, Writable } from 'node:stream';
import type { StoreHandle } from './store/handle.js';

export type Format = 'table' | 'json' | 'ndjson' | 'csv';
export type AuthHeader = 'bearer' | 'x-api-key';

/** A progress indicator on stderr; a no-op object when stderr is not a TTY or --quiet is on. */
export interface Spinner {
  update(text: string): void;
  /** Stops and clears the spinner line. */
  stop(): void;
}

/** The one object that touches the process's streams (gh's iostreams). */
export interface IO {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly isStdinTTY: boolean;
  readonly isStdoutTTY: boolean;
  readonly isStderrTTY: boolean;
  /** Colour on stdout/stderr: TTY, no NO_COLOR, no --no-color. */
  readonly color: boolean;
  /** Terminal width for tables and bars (80 when unknown). */
  readonly columns: number;
  /** Width of stderr, which talk (notices, errors, hints) is wrapped to (80 when unknown). */
  readonly errColumns: number;
  /**
   * With --log-format timestamped: the time every stderr line starts with. A writer of a JSON
   * line puts it in the object instead (RECORD_LINE in io.ts leaves such lines as they are).
   */
  readonly logTime?: () => string;
  /** Whether the terminal can show Unicode block characters (from LANG/LC_ALL/LC_CTYPE). */
  readonly unicode: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
  /** Raw data to stdout. */
  out(text: string): void;
  /** A line of talk to stderr (newline added), shown unless --quiet. */
  info(message: string): void;
  /** A warning line to stderr, shown even with --quiet. */
  warn(message: string): void;
  /** An error line to stderr, always shown. */
  error(message: string): void;
  /** A line to stderr only with --verbose. */
  debug(message: string): void;
  /** Starts a spinner on stderr (TTY only, not --quiet); otherwise returns a no-op spinner. */
  spinner(text: string): Spinner;
  /**
   * True once nobody reads what `out` writes: the pager was quit, or stdout failed. A command
   * that would go on fetching (and paying) for output stops then.
   */
  readonly outputClosed: boolean;
  /**
   * Ends the output: text held back (shorter than the screen) is written, or the pager is given
   * its end and awaited, so the prompt returns when the person has quit it. main() calls it.
   */
  finish(): Promise<void>;
}

export type SettingSource = 'flag' | 'environment' | 'config file' | 'default' | 'sandbox';

export interface Setting<T> {
  value: T;
  source: SettingSource;
}

/** Settings after precedence: flags > environment > config file (the profile in force) > defaults. */
export interface Config {
  /**
   * The config file's profile whose settings are in force, and what chose it (docs/configuration.md):
   * --profile, COMPANY_DATA_PROFILE, the file's current_profile, else "default". Absent where no
   * config file was consulted.
   */
  profile?: Setting<string> & {
    /** The chosen profile is not in the config file (only `config list` gets this far). */
    missing?: boolean;
  };
  baseUrl?: Setting<string>;
  /**
   * The names of the credit headers, for a service whose names nothing recognises
   * (credits_charged_header, credits_remaining_header; src/http/credits.ts reads the rest by meaning).
   */
  creditHeaders?: { charged?: string; remaining?: string };
  /** The key itself; never printed. */
  apiKey?: Setting<string>;
  authHeader: Setting<AuthHeader>;
  format: Setting<Format>;
  /** Per-attempt idle timeout for headers and body, in ms. */
  timeoutMs: Setting<number>;
  retries: Setting<number>;
  /** Connections a process opens to a PostgreSQL store, at most (store_connections; docs/store.md). */
  storeConnections?: Setting<number>;
  allowInsecureHttp: boolean;
  csvRaw: boolean;
  /** Path of the config file (whether or not it exists). */
  configPath: string;
  /** Directory for cached catalogs. */
  cacheDir: string;
}

export interface Credits {
  /** Credits charged by the last response, when the server said so. */
  charged?: number;
  /** The header the charge was read from (as sent), for messages. */
  chargedName?: string;
  /** A charge header whose value is not a number, as sent: it counts as possibly charged. */
  chargedText?: string;
  /** Balance left after the last response, when the server said so. */
  remaining?: number;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  method: HttpMethod;
  /** Path relative to the base URL, starting with /api/. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body; sent with Content-Type: application/json. */
  body?: unknown;
  /** `body` already serialised (a caller that measured it): sent as is instead of serialising again. */
  bodyJson?: string;
  /** false for the public endpoints: the key is never sent to them. */
  auth: boolean;
  /** Extra headers (sandbox fault switches in tests, for example). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Called before a retry of this problem (catalog_refresh_in_progress refreshes caches). */
  onRetry?: (
    problem: import('./problem.js').Problem,
    attempt: number,
    /** How long the client will wait before the next attempt. */
    delayMs: number,
  ) => void | Promise<void>;
  /**
   * A caller that paces its own refusals (a batch, src/pace.ts): while this returns true, a 429
   * or a gateway's 503 without Retry-After is retried without a backoff and without counting
   * against --retries (onRetry takes the retry's turn in the rate).
   */
  pacesRefusals?: () => boolean;
  /**
   * false: no spinner for this call (a batch draws its own progress). A hint for the command
   * layer's spinner (src/spinning-client.ts); the HTTP client itself never draws anything.
   */
  spinner?: false;
}

export interface ApiResponse<T = unknown> {
  status: number;
  data: T;
  headers: Record<string, string>;
  credits: Credits;
  /** Number of attempts this call took (1 = no retry). */
  attempts: number;
}

export interface Client {
  /** Sends one call with retries; resolves with the parsed JSON body or throws a Problem. */
  request<T = unknown>(options: RequestOptions): Promise<ApiResponse<T>>;
  /** Credits of the most recent authenticated response. */
  readonly lastCredits: Credits;
  /**
   * Calls `listener` with what each response's RateLimit headers say (src/http/rate-limit-headers.ts);
   * returns what stops it.
   */
  watchRateLimits?(listener: (limits: import('./http/rate-limit-headers.js').RateLimits) => void): () => void;
  close(): Promise<void>;
}

/** What every command receives (gh's cmdutil.Factory). The client is created on first use. */
export interface Context {
  io: IO;
  config: Config;
  readonly client: Client;
  /** The arguments of this invocation (without node and the script), as given. */
  readonly argv: readonly string[];
  /** The environment of this invocation: commands never read process.env themselves. */
  readonly env: NodeJS.ProcessEnv;
  /** The clock, in epoch milliseconds (a test may give its own). */
  readonly now: () => number;
  /** The command being run, as the spend ledger names it ('enrich', 'search', 'api' ...). */
  readonly command: string;
  /** The result store and spend ledger of this invocation (src/store/handle.ts). */
  readonly store: StoreHandle;
}
