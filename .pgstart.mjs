import {createRequire} from 'module'; const require = createRequire(import.meta.url);

// ../../tmp/pgt/start.ts
import { writeFileSync as writeFileSync2 } from "node:fs";

// test/helpers/postgres.ts
import { execFile, spawn } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
var ROOT = "/usr/lib/postgresql";
var PASSWORD = "secret-pw-4711";
var USER = "company";
var COMMAND_TIMEOUT_MS = 3e4;
function postgresBin() {
  if (existsSync(`${ROOT}/15/bin/initdb`)) return { bin: `${ROOT}/15/bin` };
  const versions = existsSync(ROOT) ? readdirSync(ROOT).filter((name) => existsSync(`${ROOT}/${name}/bin/initdb`)).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length > 0) return { bin: `${ROOT}/${versions[0]}/bin` };
  return { reason: `no PostgreSQL under ${ROOT}/*/bin (.ci/run installs Debian's postgresql)` };
}
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
var asRoot = process.getuid?.() === 0;
function run(program, args) {
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: COMMAND_TIMEOUT_MS, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${program} ${args.join(" ")}: ${error.message}
${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}
async function startPostgres() {
  const found = postgresBin();
  if ("reason" in found) throw new Error(found.reason);
  const bin = found.bin;
  const root = mkdtempSync(join(tmpdir(), "cd-pg-"));
  const data = join(root, "data");
  const socket = join(root, "sock");
  mkdirSync(socket, { mode: 448 });
  const pwfile = join(root, "pwfile");
  writeFileSync(pwfile, `${PASSWORD}
`, { mode: 384 });
  if (asRoot) {
    const { uid, gid } = postgresIds();
    for (const path of [root, socket, pwfile]) chownSync(path, uid, gid);
  }
  await run(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    `--pwfile=${pwfile}`,
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C"
  ]);
  let port = await freePort();
  const log = join(root, "server.log");
  const start = () => run(`${bin}/pg_ctl`, [
    "-D",
    data,
    "-l",
    log,
    "-w",
    "-t",
    "30",
    "-o",
    `-k ${socket} -c listen_addresses=127.0.0.1 -p ${port} -c fsync=off -c full_page_writes=off -c synchronous_commit=off`,
    "start"
  ]);
  const halt = async () => {
    await run(`${bin}/pg_ctl`, ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
  };
  await start().catch(async () => {
    port = await freePort();
    await start();
  });
  const admin = async (sql, params = [], database = "postgres") => {
    const client = new pg.Client({ host: socket, port, user: "postgres", database });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  const urlOf = (database) => `postgres://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${database}`;
  await admin(`CREATE ROLE ${USER} LOGIN PASSWORD '${PASSWORD}'`);
  await admin(`CREATE DATABASE ${USER} OWNER ${USER}`);
  let stopped = false;
  const ctl = asRoot ? `runuser -u postgres -- ${bin}/pg_ctl` : `${bin}/pg_ctl`;
  const watchdog = spawn(
    "bash",
    [
      "-c",
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${ctl} -D '${data}' -m immediate stop; rm -rf '${root}'`
    ],
    { detached: true, stdio: "ignore" }
  );
  watchdog.unref();
  return {
    url: urlOf(USER),
    port,
    password: PASSWORD,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await admin(`CREATE DATABASE ${name} OWNER ${USER}`);
      return urlOf(name);
    },
    admin,
    halt,
    async restart() {
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      watchdog.kill();
      try {
        await halt();
      } catch {
      }
      rmSync(root, { recursive: true, force: true });
    }
  };
}
function postgresIds() {
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((entry) => entry.startsWith("postgres:"));
  if (!line) throw new Error("running as root, but there is no user postgres to run the server as");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

// ../../tmp/pgt/start.ts
var pg2 = await startPostgres();
writeFileSync2("/tmp/pgt/url", pg2.url);
process.on("SIGTERM", async () => {
  await pg2.stop();
  process.exit(0);
});
setInterval(() => {
}, 1e3);
