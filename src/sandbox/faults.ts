// Sandbox faults (docs/contract.md, "Faults"): how a fault is written, the queue that
// POST /_sandbox/faults and handle.faults.add() fill, and the seeded random faults of --fault-rate.
import { catalogEntry } from '../error-catalog.js';
import { mulberry32 } from './dataset.js';

export type FaultEffect =
  | { kind: 'problem'; code: string; retryAfterSeconds?: number }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset' }
  | { kind: 'truncate' }
  | { kind: 'html502' }
  | { kind: 'escape' };

export interface Fault {
  /** The fault as written (`rate_limited:30`), which is what the request log shows. */
  name: string;
  effect: FaultEffect;
}

/** Delays above ten minutes are a typo, not a test (and would hold a graceful close hostage). */
const MAX_DELAY_MS = 600_000;

function parseWholeNumber(text: string | undefined, max: number): number | undefined {
  if (text === undefined || !/^\d{1,9}$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
}

/** Parses `<name>[:<argument>]`; undefined when it is not a fault the sandbox knows. */
export function parseFault(text: string): Fault | undefined {
  const name = text.trim();
  const colon = name.indexOf(':');
  const head = colon === -1 ? name : name.slice(0, colon);
  const arg = colon === -1 ? undefined : name.slice(colon + 1);
  const simple = (effect: FaultEffect): Fault | undefined =>
    arg === undefined ? { name, effect } : undefined;
  switch (head) {
    case 'delay': {
      const ms = parseWholeNumber(arg, MAX_DELAY_MS);
      return ms === undefined ? undefined : { name, effect: { kind: 'delay', ms } };
    }
    case 'rate_limited': {
      if (arg === undefined) return { name, effect: { kind: 'problem', code: head, retryAfterSeconds: 1 } };
      const seconds = parseWholeNumber(arg, 999_999_999);
      return seconds === undefined
        ? undefined
        : { name, effect: { kind: 'problem', code: head, retryAfterSeconds: seconds } };
    }
    case 'reset':
    case 'truncate':
    case 'html502':
    case 'escape':
      return simple({ kind: head });
    default:
      return catalogEntry(head) ? simple({ kind: 'problem', code: head }) : undefined;
  }
}

export const FAULT_SYNTAX =
  'a catalog code, rate_limited:<seconds>, delay:<ms>, reset, truncate, html502 or escape';

export interface QueueOptions {
  /** How many matching requests get the fault (default 1). */
  times?: number;
  /** Path prefix the request must start with (default: every path). */
  path?: string;
  /** Request method the fault applies to (default: any). */
  method?: string;
}

export interface QueuedFault {
  fault: string;
  remaining: number;
  path: string;
  method: string | null;
}

interface Entry {
  fault: Fault;
  remaining: number;
  path: string;
  method: string | null;
}

/** Faults waiting for their next matching requests, oldest first. */
export class FaultQueue {
  private entries: Entry[] = [];

  /** Throws a TypeError naming the problem when the fault or an option is not valid. */
  add(faultText: string, options: QueueOptions = {}): QueuedFault {
    const fault = parseFault(faultText);
    if (!fault) throw new TypeError(`unknown fault "${faultText}"; expected ${FAULT_SYNTAX}`);
    const times = options.times ?? 1;
    if (!Number.isSafeInteger(times) || times < 1) throw new TypeError('times must be a whole number >= 1');
    const path = options.path ?? '/';
    if (!path.startsWith('/')) throw new TypeError('path must start with "/"');
    const method = options.method ? options.method.toUpperCase() : null;
    const entry: Entry = { fault, remaining: times, path, method };
    this.entries.push(entry);
    return describe(entry);
  }

  /** The first queued fault matching this request, counted as used. */
  take(method: string, path: string): Fault | undefined {
    if (this.entries.length === 0) return undefined;
    const index = this.entries.findIndex(
      (e) => path.startsWith(e.path) && (e.method === null || e.method === method),
    );
    if (index === -1) return undefined;
    const entry = this.entries[index];
    entry.remaining -= 1;
    if (entry.remaining === 0) this.entries.splice(index, 1);
    return entry.fault;
  }

  list(): QueuedFault[] {
    return this.entries.map(describe);
  }

  /** Empties the queue and says how many faults were dropped. */
  clear(): number {
    const count = this.entries.length;
    this.entries = [];
    return count;
  }
}

function describe(entry: Entry): QueuedFault {
  return { fault: entry.fault.name, remaining: entry.remaining, path: entry.path, method: entry.method };
}

const RANDOM_FAULTS = ['internal_error', 'rate_limited', 'reset', 'html502'];
const RANDOM_SEARCH_FAULTS = [...RANDOM_FAULTS, 'search_unavailable'];

/**
 * Random retryable faults for --fault-rate. One draw per authenticated request, in arrival order,
 * so the same seed and the same request sequence give the same faults.
 */
export function randomFaults(rate: number, seed: number): (isSearch: boolean) => Fault | undefined {
  if (!(rate > 0)) return () => undefined;
  const random = mulberry32(seed ^ 0x5eed);
  return (isSearch) => {
    const roll = random();
    const pick = random();
    if (roll >= rate) return undefined;
    const names = isSearch ? RANDOM_SEARCH_FAULTS : RANDOM_FAULTS;
    return parseFault(names[Math.floor(pick * names.length)]);
  };
}
