// Pacing figures (issue 31): the rate a batch reaches against a sandbox limited to n requests a
// second with `--rate n` (the limit itself), and the rate it reaches behind a gateway that
// refuses what passes its rate with an HTML 503 page and no Retry-After (nginx's limit_req).
// Rates are read from arrivals: the sandbox's request log (`at`, epoch ms) or the gateway's own
// clock, from the first lookup to the last, so start-up is not in them.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { join } from 'node:path';
import { BIN, cliEnv, run } from './proc.mjs';

/** Lookups a second between the first and the last of `times` (ms). */
export function rateOf(times) {
  if (times.length < 2) return 0;
  const sorted = [...times].sort((a, b) => a - b);
  return ((sorted.length - 1) * 1000) / (sorted.at(-1) - sorted[0]);
}

/** Most arrivals in any window of `ms` starting at an arrival. */
export function busiestWindow(times, ms = 1000) {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && sorted[end] < sorted[start] + ms) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

async function enrich({ url, key, domains, scratch, tag, extra = [] }) {
  const input = join(scratch, `${tag}.csv`);
  writeFileSync(input, `domain\n${domains.join('\n')}\n`);
  const argv = [
    process.execPath,
    BIN,
    '--base-url',
    url,
    'enrich',
    '--input',
    input,
    '--output',
    join(scratch, `${tag}.out.csv`),
    '--store',
    join(scratch, `${tag}-${process.hrtime.bigint()}.db`),
    ...extra,
  ];
  const env = cliEnv(scratch, { COMPANY_DATA_API_KEY: key });
  return run(argv, { env });
}

async function sandboxLog(sandbox) {
  const res = await fetch(`${sandbox.url}/_sandbox/requests`);
  const { requests } = await res.json();
  await fetch(`${sandbox.url}/_sandbox/requests`, { method: 'DELETE' });
  return requests.filter((r) => r.path.startsWith('/api/domains/'));
}

/**
 * `enrich --rate n --concurrency 16` against a sandbox whose `--rate-limit` is n: the share of n
 * reached, and the 429s the sandbox answered (the target is none).
 */
export async function pacedRun({ sandbox, limit, domains, scratch }) {
  await sandboxLog(sandbox);
  const result = await enrich({
    url: sandbox.url,
    key: sandbox.keys.full,
    domains,
    scratch,
    tag: `paced-${limit}`,
    extra: ['--rate', String(limit), '--concurrency', '16', '--quiet'],
  });
  const log = await sandboxLog(sandbox);
  const times = log.map((r) => r.at);
  return {
    limit,
    lookups: log.length,
    exit: result.code,
    refused429: log.filter((r) => r.status === 429).length,
    rate: rateOf(times),
    busiestSecond: busiestWindow(times),
    seconds: result.ms / 1000,
  };
}

const PAGE =
  '<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/**
 * A gateway in front of `target` allowing `rate` lookups a second with a burst of `burst` (a
 * token bucket, as nginx's `limit_req ... burst=b nodelay`), answering the rest with nginx's
 * HTML 503 page and no Retry-After. Everything else passes.
 */
export async function startGateway({ target, rate, burst }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const base = new URL(target);
  const arrivals = [];
  let tokens = burst;
  let last = performance.now();
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    if (path.startsWith('/api/domains/')) {
      const at = performance.now();
      tokens = Math.min(burst, tokens + ((at - last) * rate) / 1000);
      last = at;
      if (tokens < 1) {
        arrivals.push({ at, status: 503 });
        req.resume();
        res.writeHead(503, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(PAGE) });
        res.end(PAGE);
        return;
      }
      tokens -= 1;
      arrivals.push({ at, status: 200 });
    }
    const onward = request(
      { host: base.hostname, port: base.port, path, method: req.method, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    onward.on('error', () => res.destroy());
    req.pipe(onward);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    arrivals,
    async close() {
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
}

/**
 * A batch with the defaults (no --rate; the sandbox reports no limit, so it starts unpaced)
 * behind a gateway of `rate` a second: the rate that reached the service against the gateway's,
 * the share refused, and what the run said it charged.
 */
export async function gatewayRun({ sandbox, rate, burst, domains, scratch }) {
  const gateway = await startGateway({ target: sandbox.url, rate, burst });
  try {
    const result = await enrich({
      url: gateway.url,
      key: sandbox.keys.full,
      domains,
      scratch,
      tag: `gateway-${rate}`,
    });
    const passed = gateway.arrivals.filter((a) => a.status === 200);
    const refused = gateway.arrivals.length - passed.length;
    const summary = result.stderr.split('\n').find((line) => line.includes('Enriched: ')) ?? '';
    return {
      gatewayRate: rate,
      burst,
      rows: domains.length,
      exit: result.code,
      passed: passed.length,
      refused,
      refusedShare: refused / gateway.arrivals.length,
      rate: rateOf(passed.map((a) => a.at)),
      seconds: result.ms / 1000,
      summary,
    };
  } finally {
    await gateway.close();
  }
}
