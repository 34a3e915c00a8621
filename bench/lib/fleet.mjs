// The fleet figure (issue 48): hosts with nothing local in common (their own HOME and XDG folders)
// on one key and one PostgreSQL store, against a sandbox limited to n requests a second with 20 ms
// answers, against one host alone on the same key, limit and distinct domains. Each side runs from
// the first process's start to the last one's exit; the sandbox's request log says what reached it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cliEnv, run } from './proc.mjs';

/** The hosts' inputs: host i reads `perHost` of `domains` from i × step on, so neighbours overlap. */
export function overlappingInputs(domains, hosts) {
  const perHost = Math.ceil((domains.length * 2) / (hosts + 1));
  const step = hosts > 1 ? (domains.length - perHost) / (hosts - 1) : 0;
  return Array.from({ length: hosts }, (_, i) => {
    const from = Math.round(i * step);
    const slice = domains.slice(from, from + perHost);
    // Every other host reads its domains backwards: hosts meet head on as well as side by side.
    return i % 2 ? slice.reverse() : slice;
  });
}

/** The sandbox's request log since it was last emptied, emptied again. */
async function takeLog(sandbox) {
  const res = await fetch(`${sandbox.url}/_sandbox/requests`);
  const { requests } = await res.json();
  await fetch(`${sandbox.url}/_sandbox/requests`, { method: 'DELETE' });
  return requests;
}

/** Requests in each second of the epoch, in order: what the sandbox's fixed windows count. */
function perSecondCounts(times) {
  const counts = new Map();
  for (const at of times) counts.set(Math.floor(at / 1000), (counts.get(Math.floor(at / 1000)) ?? 0) + 1);
  return [...counts.values()];
}

/**
 * Runs one `company-data enrich` per input at once, each a host of its own on the store at
 * `storeUrl`, with default options (pacing at 90 % of the limit GET /api/me reports).
 */
export async function fleetRun({ sandbox, storeUrl, inputs, scratch, tag }) {
  // Started just after a second begins: the sandbox's windows hold nothing of the run before.
  await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
  await takeLog(sandbox);
  const started = performance.now();
  const startedAt = Date.now();
  const results = await Promise.all(
    inputs.map((domains, i) => {
      const home = join(scratch, `${tag}-host${i}`);
      mkdirSync(home, { recursive: true });
      const input = join(home, 'in.csv');
      writeFileSync(input, `domain\n${domains.join('\n')}\n`);
      const env = cliEnv(scratch, {
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_CACHE_HOME: join(home, 'cache'),
        XDG_STATE_HOME: join(home, 'state'),
        COMPANY_DATA_API_KEY: sandbox.keys.full,
        COMPANY_DATA_STORE: storeUrl,
      });
      const argv = [process.execPath, BIN, '--quiet', '--base-url', sandbox.url, 'enrich'];
      return run([...argv, '--input', input, '--output', join(home, 'out.csv')], { env, cwd: home });
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const endedAt = Date.now();
  const log = (await takeLog(sandbox)).filter((r) => r.key_name !== null);
  const lookups = log.filter((r) => r.path.startsWith('/api/domains/'));
  const bought = new Set(lookups.filter((r) => r.status === 200).map((r) => r.path));
  return {
    hosts: inputs.length,
    rows: inputs.reduce((sum, domains) => sum + domains.length, 0),
    seconds,
    exits: results.map((r) => r.code),
    stderr: results.map((r) => r.stderr).filter(Boolean),
    lookups: lookups.length,
    distinctBought: bought.size,
    boughtTwice: lookups.filter((r) => r.status === 200).length - bought.size,
    refused429: log.filter((r) => r.status === 429).length,
    busiestSecond: Math.max(0, ...perSecondCounts(log.map((r) => r.at))),
    // Where the time goes: start-up (the first request's arrival), the requests, the ending.
    firstArrivalMs: log.length > 0 ? log[0].at - startedAt : undefined,
    spanSeconds: log.length > 1 ? (log.at(-1).at - log[0].at) / 1000 : 0,
    lastArrivalToExitMs: log.length > 0 ? endedAt - log.at(-1).at : undefined,
    perSecond: perSecondCounts(log.map((r) => r.at)),
  };
}
