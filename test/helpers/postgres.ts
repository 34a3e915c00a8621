// A real PostgreSQL server for the tests of the shared store: `initdb` into a fresh temporary
// folder (as the `postgres` user when the tests run as root), `pg_ctl start` on a free loopback
// port with a private socket folder, a role `company` with a password (host connections need it:
// scram-sha-256), and a database per test file. No Docker, no stand-in: row locks, advisory locks
// and killed sessions are the server's own.
import { execFile, spawn } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { cannotRunHere } from './skips.js';

const ROOT = '/usr/lib/postgresql';
const PASSWORD = 'secret-pw-4711';
const USER = 'company';
/** Each server command is bounded: a server that does not start fails the test, never hangs it. */
const COMMAND_TIMEOUT_MS = 30_000;

export interface Postgres {
  /** postgres://company:<password>@127.0.0.1:<port>/company */
  readonly url: string;
  readonly port: number;
  /** The password of the role `company` (to check that no message shows it). */
  readonly password: string;
  /** A new empty database owned by `company`; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Runs SQL as the superuser over the private socket (pg_terminate_backend, a schema's tables). */
  admin<T extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params?: unknown[],
    database?: string,
  ): Promise<T[]>;
  /** Stops the server at once (sessions are ended, as by an administrator), keeping its data. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port. */
  restart(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** The folder of PostgreSQL's programs (15 preferred), or why there is none. */
export function postgresBin(): { bin: string } | { reason: string } {
  if (existsSync(`${ROOT}/15/bin/initdb`)) return { bin: `${ROOT}/15/bin` };
  const versions = existsSync(ROOT)
    ? readdirSync(ROOT)
        .filter((name) => existsSync(`${ROOT}/${name}/bin/initdb`))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length > 0) return { bin: `${ROOT}/${versions[0]}/bin` };
  return { reason: `no PostgreSQL under ${ROOT}/*/bin (.ci/run installs Debian's postgresql)` };
}

/** True when this machine has no PostgreSQL to test with, having said so (throws under CI=true). */
export function postgresMissing(): boolean {
  const found = postgresBin();
  return cannotRunHere('postgres', 'reason' in found ? found.reason : undefined);
}

/** A port nobody listens on now: listen on port 0, note the port, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** Runs a server program, as `postgres` when the tests run as root. */
function run(program: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: COMMAND_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${program} ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

export interface PostgresOptions {
  /** Server settings beyond the helper's own, as `-c name=value` (max_connections: 40). */
  settings?: Record<string, string | number>;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<Postgres> {
  const found = postgresBin();
  if ('reason' in found) throw new Error(found.reason);
  const bin = found.bin;
  const root = mkdtempSync(join(tmpdir(), 'cd-pg-'));
  const data = join(root, 'data');
  const socket = join(root, 'sock');
  mkdirSync(socket, { mode: 0o700 });
  const pwfile = join(root, 'pwfile');
  writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (asRoot) {
    const { uid, gid } = postgresIds();
    for (const path of [root, socket, pwfile]) chownSync(path, uid, gid);
  }
  await run(`${bin}/initdb`, [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwfile}`,
    '--no-sync',
    '-E',
    'UTF8',
    '--locale=C',
  ]);
  let port = await freePort();
  const extra = Object.entries(options.settings ?? {})
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join('');
  const log = join(root, 'server.log');
  const start = () =>
    run(`${bin}/pg_ctl`, [
      '-D',
      data,
      '-l',
      log,
      '-w',
      '-t',
      '30',
      '-o',
      `-k ${socket} -c listen_addresses=127.0.0.1 -p ${port} -c fsync=off -c full_page_writes=off -c synchronous_commit=off${extra}`,
      'start',
    ]);

  // Another program may take the free port between its check and the server's start: once more.
  await start().catch(async () => {
    port = await freePort();
    await start();
  });

  // One superuser session per database, kept between calls (a new one costs a backend's start,
  // and a test polls pg_locks); one that the server ends under it is forgotten, and the next call
  // opens another.
  const sessions = new Map<string, Promise<pg.Client>>();
  const session = (database: string): Promise<pg.Client> => {
    const kept = sessions.get(database);
    if (kept) return kept;
    const client = new pg.Client({ host: socket, port, user: 'postgres', database });
    const opened = client.connect().then(() => client);
    const forget = () => {
      if (sessions.get(database) === opened) sessions.delete(database);
    };
    client.on('error', forget);
    client.on('end', forget);
    opened.catch(forget);
    sessions.set(database, opened);
    return opened;
  };
  const endSessions = async () => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((opened) => opened.then((client) => client.end()).catch(() => {})));
  };
  const halt = async () => {
    await endSessions();
    await run(`${bin}/pg_ctl`, ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
  };
  const admin = async <T extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    database = 'postgres',
  ) => (await (await session(database)).query<T>(sql, params)).rows;
  const urlOf = (database: string) =>
    `postgres://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${database}`;
  await admin(`CREATE ROLE ${USER} LOGIN PASSWORD '${PASSWORD}'`);
  await admin(`CREATE DATABASE ${USER} OWNER ${USER}`);

  let stopped = false;
  // A test process that ends without stop() (a crash, a worker killed at a timeout) must leave no
  // server behind: a watchdog stops it once this process is gone.
  const ctl = asRoot ? `runuser -u postgres -- ${bin}/pg_ctl` : `${bin}/pg_ctl`;
  const watchdog = spawn(
    'bash',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${ctl} -D '${data}' -m immediate stop; rm -rf '${root}'`,
    ],
    { detached: true, stdio: 'ignore' },
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
        // Halted already.
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function postgresIds(): { uid: number; gid: number } {
  // /etc/passwd rather than `id`: no process to wait for.
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root, but there is no user postgres to run the server as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
