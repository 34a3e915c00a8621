// `me -o json` against a bare `fetch()` of the same endpoint from `node -e` (issue 31: at most
// 1.3x): the same request, key and output, as processes started alike, in interleaved rounds.
import { BIN, cliEnv, startSandbox, timeSync } from './proc.mjs';
import { figure, interleaveOrder, mean, median } from './stats.mjs';

const NODE = process.execPath;
// What a script would write: one request with the key, the JSON printed.
const BARE_FETCH = `fetch(process.env.ME_URL,{headers:{authorization:'Bearer '+process.env.COMPANY_DATA_API_KEY,accept:'application/json'}}).then(r=>r.json()).then(j=>process.stdout.write(JSON.stringify(j,null,2)+'\\n'))`;

export async function oneRequestFigure({ rounds, scratch, log }) {
  const sandbox = await startSandbox({ companies: 1000, scratch });
  try {
    const keyed = cliEnv(scratch, {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      ME_URL: `${sandbox.url}/api/me`,
    });
    const commands = [
      () => timeSync([NODE, '-e', BARE_FETCH], keyed, scratch),
      () => timeSync([NODE, BIN, '--base-url', sandbox.url, 'me', '-o', 'json'], keyed, scratch),
    ];
    const results = commands.map(() => []);
    for (const i of interleaveOrder(commands.length, 3)) commands[i]();
    log(`one request: ${rounds} interleaved runs each of a bare fetch() and me -o json`);
    for (const i of interleaveOrder(commands.length, rounds)) results[i].push(commands[i]());
    const [bare, me] = results;
    const ms = median(me.map((r) => r.ms));
    const bareMs = median(bare.map((r) => r.ms));
    return figure({
      id: 'startup.me-vs-fetch',
      name: 'me -o json (sandbox, 0 ms) vs a bare fetch() of /api/me',
      ratio: ms / bareMs,
      target: { op: '<=', value: 1.3 },
      note: `${ms.toFixed(0)} ms vs ${bareMs.toFixed(0)} ms`,
      details: {
        medianMs: Math.round(ms * 10) / 10,
        fetchMedianMs: Math.round(bareMs * 10) / 10,
        cpuMeanMs: Math.round(mean(me.map((r) => r.cpuMs))),
        fetchCpuMeanMs: Math.round(mean(bare.map((r) => r.cpuMs))),
        runs: me.length,
      },
    });
  } finally {
    await sandbox.stop();
  }
}
