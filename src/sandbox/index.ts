// The offline sandbox, in-process: `startSandbox()` is what `--sandbox`, the `sandbox` command,
// the tests and the benchmarks start. docs/contract.md says what it serves.
import type { AddressInfo } from 'node:net';
import { SANDBOX_KEYS } from './catalogs.js';
import { type Dataset, generateDataset } from './dataset.js';
import type { KeyName } from './endpoints.js';
import { prepareDataset } from './engine.js';
import { FaultQueue, type QueuedFault, type QueueOptions, randomFaults } from './faults.js';
import { type LayoutName, layoutOf } from './layouts.js';
import { FixedWindowLimiter } from './rate-limit.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { createSandboxServer } from './server.js';

export type { QueuedFault, QueueOptions } from './faults.js';
export { isLayoutName, LAYOUT_NAMES, type LayoutName } from './layouts.js';
export type { RequestLogEntry } from './request-log.js';

export interface SandboxOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Seed of the dataset and of random faults (default 42). */
  seed?: number;
  /** Number of companies (default 10,000). */
  companies?: number;
  /** Added to every /api response (default 0). */
  latencyMs?: number;
  /** Requests per second per key; 0 (the default) is unlimited. */
  rateLimit?: number;
  /** Probability of a random retryable fault on each authenticated request (default 0). */
  faultRate?: number;
  /**
   * Build the search and lookalike indexes before listening (default false: on first use).
   * A long-running server wants it; `--sandbox` for one lookup does not pay for it.
   */
  warm?: boolean;
  /**
   * Serve a products catalog without `default` members, as a service that does not say which
   * products a request without `products` returns (default false). Lookups are unchanged.
   */
  catalogWithoutDefaults?: boolean;
  /**
   * How answers are shaped where the spec leaves the shape open (default `flat`, the layout
   * docs/contract.md shows); src/sandbox/layouts.ts has the others.
   */
  layout?: LayoutName;
}

export interface SandboxHandle {
  /** Base URL, without a trailing slash. */
  url: string;
  keys: Record<KeyName, string>;
  dataset: Dataset;
  faults: {
    /** Queues a fault for the next matching requests; throws on an unknown fault. */
    add(fault: string, options?: QueueOptions): QueuedFault;
    clear(): void;
  };
  /** The request log, oldest first. */
  requests(): RequestLogEntry[];
  /** Current balance of each sandbox key. */
  balances(): Record<KeyName, number>;
  /** Stops accepting, lets in-flight requests finish (a few seconds at most), closes every socket. */
  close(): Promise<void>;
}

function check(name: string, value: number, min: number, max: number, integer = true): number {
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `${name} must be ${integer ? 'a whole number' : 'a number'} between ${min} and ${max}`,
    );
  }
  return value;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const host = options.host ?? '127.0.0.1';
  const port = check('port', options.port ?? 0, 0, 65_535);
  const seed = check('seed', options.seed ?? 42, 0, 2 ** 32 - 1);
  const companies = check('companies', options.companies ?? 10_000, 0, 2_000_000);
  const latencyMs = check('latencyMs', options.latencyMs ?? 0, 0, 600_000);
  const rateLimit = check('rateLimit', options.rateLimit ?? 0, 0, 1_000_000);
  const faultRate = check('faultRate', options.faultRate ?? 0, 0, 1, false);
  const layout = layoutOf(options.layout);

  const dataset = generateDataset({ seed, companies });
  if (options.warm) prepareDataset(dataset);
  const names = Object.keys(SANDBOX_KEYS) as KeyName[];
  const balances = new Map(names.map((name) => [name, SANDBOX_KEYS[name].balance]));
  const faults = new FaultQueue();
  const log = new RequestLog();
  const sandbox = createSandboxServer({
    dataset,
    balances,
    faults,
    randomFault: randomFaults(faultRate, seed),
    limiter: new FixedWindowLimiter(rateLimit),
    log,
    latencyMs,
    rateLimit,
    catalogWithoutDefaults: options.catalogWithoutDefaults === true,
    layout,
  });

  await new Promise<void>((resolve, reject) => {
    sandbox.server.once('error', reject);
    sandbox.server.listen(port, host, () => {
      sandbox.server.off('error', reject);
      resolve();
    });
  });
  const address = sandbox.server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${shownHost}:${address.port}`,
    keys: Object.fromEntries(names.map((name) => [name, SANDBOX_KEYS[name].key])) as Record<KeyName, string>,
    dataset,
    faults: {
      add: (fault, queueOptions) => faults.add(fault, queueOptions),
      clear: () => {
        faults.clear();
      },
    },
    requests: () => log.entries(),
    balances: () => Object.fromEntries(balances) as Record<KeyName, number>,
    close: () => sandbox.close(),
  };
}
