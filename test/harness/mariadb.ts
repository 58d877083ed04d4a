/**
 * A throw-away MariaDB on 127.0.0.1: a fresh datadir, then `mariadbd` with a socket in the same
 * temp dir, no binlog and small buffers so it starts in well under a second. Grant tables are real:
 * root gets a random password (set by an --init-file at every start), so authentication code paths
 * are exercised. One server per test file; `createDatabase()` gives each test a clean schema.
 *
 * The datadir comes from mariadb-datadir.ts (a copy of a cached pristine install).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import { requireBinary } from './binaries.ts';
import { spawnManaged, tail, type ManagedProcess } from './child.ts';
import { prepareDataDir, rootUserArg } from './mariadb-datadir.ts';
import { freePort } from './ports.ts';
import { tmpDir, type TmpDir } from './tmp.ts';
import { sleep } from './wait.ts';

const HOST = '127.0.0.1';
const USER = 'root';
const READY = /ready for connections/;
const DB_NAME = /^[A-Za-z0-9_]{1,64}$/;

export interface StartMariaDbOptions {
  /** Fixed port (then a clash is not retried). Default: a free port from the OS. */
  port?: number;
  /** Database created at start and named in `url`. Default "test". */
  database?: string;
  /** Extra mariadbd arguments, e.g. ['--default-time-zone=+08:00']. */
  args?: readonly string[];
  startTimeoutMs?: number;
}

export interface MariaDbServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** `mysql://root:PASSWORD@127.0.0.1:PORT/DATABASE` */
  readonly url: string;
  readonly socketPath: string;
  /** How long the first start took, for the harness's own budget. */
  readonly timings: MariaDbTimings;
  urlFor(database: string): string;
  isRunning(): boolean;
  logs(): string;
  /** Drops (if present) and creates a database; resolves with its URL. Default name is unique. */
  createDatabase(name?: string): Promise<string>;
  /** Final teardown: SIGTERM (SIGKILL after 10 s), remove the datadir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, keeping port and datadir for `restart()` (crash simulation, InnoDB recovers). */
  kill(): Promise<void>;
  /** Stops if running, then starts again on the same port and datadir. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open and new ones are accepted by the kernel, but nothing answers (hung server). */
  pause(): void;
  /** Resolves once the paused server's every thread is stopped (pause() only queues the signal). */
  paused(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
}

export interface MariaDbTimings {
  /** Creating the datadir: a copy of the template, or a full mariadb-install-db. */
  installMs: number;
  fromTemplate: boolean;
  /** mariadbd launch until it accepts the password over TCP. */
  startMs: number;
}

let dbCounter = 0;

export async function startMariaDb(opts: StartMariaDbOptions = {}): Promise<MariaDbServer> {
  const mariadbd = requireBinary('mariadb-server', 'mariadbd', 'mysqld');
  const installDb = requireBinary('mariadb-server', 'mariadb-install-db', 'mysql_install_db');
  const dir = tmpDir('vms-mariadb-');
  const password = randomBytes(12).toString('hex');
  const database = opts.database ?? 'test';
  if (!DB_NAME.test(database)) throw new Error(`startMariaDb: bad database name ${database}`);
  try {
    const t0 = Date.now();
    const { fromTemplate } = await prepareDataDir(installDb, mariadbd, join(dir.path, 'data'));
    const installMs = Date.now() - t0;
    writeFileSync(join(dir.path, 'init.sql'), initSql(password));

    const t1 = Date.now();
    const attempts = opts.port === undefined ? 5 : 1;
    let lastError: unknown;
    for (let i = 0; i < attempts; i++) {
      const port = opts.port ?? (await freePort());
      const launcher = (): Promise<ManagedProcess> =>
        launch(mariadbd, dir.path, port, password, opts.args ?? [], opts.startTimeoutMs ?? 30_000);
      let proc: ManagedProcess;
      try {
        proc = await launcher();
      } catch (err) {
        lastError = err; // most likely the port was taken meanwhile: try another
        continue;
      }
      const server = handle(dir, port, password, database, launcher, proc, { installMs, fromTemplate, startMs: Date.now() - t1 });
      try {
        await server.createDatabase(database);
      } catch (err) {
        await proc.kill();
        throw err;
      }
      return server;
    }
    throw new Error(`mariadb: could not start after ${attempts} attempt(s)`, { cause: lastError });
  } catch (err) {
    dir.remove();
    throw err;
  }
}

function initSql(password: string): string {
  // Runs at every start; CREATE OR REPLACE keeps it idempotent across restart().
  const pw = `'${password}'`;
  return [
    `CREATE OR REPLACE USER '${USER}'@'${HOST}' IDENTIFIED BY ${pw};`,
    `GRANT ALL PRIVILEGES ON *.* TO '${USER}'@'${HOST}' WITH GRANT OPTION;`,
    `ALTER USER '${USER}'@'localhost' IDENTIFIED BY ${pw};`,
    '',
  ].join('\n');
}

async function launch(
  bin: string,
  root: string,
  port: number,
  password: string,
  extra: readonly string[],
  timeoutMs: number,
): Promise<ManagedProcess> {
  const args = [
    '--no-defaults', // must come first
    `--datadir=${join(root, 'data')}`,
    `--socket=${join(root, 'mysqld.sock')}`,
    `--pid-file=${join(root, 'mysqld.pid')}`,
    `--tmpdir=${root}`,
    `--init-file=${join(root, 'init.sql')}`,
    `--port=${port}`,
    `--bind-address=${HOST}`,
    ...rootUserArg(),
    '--skip-log-bin',
    '--skip-name-resolve',
    '--performance-schema=OFF',
    '--innodb-buffer-pool-size=16M',
    '--innodb-log-file-size=4M',
    '--innodb-flush-log-at-trx-commit=2',
    '--innodb-doublewrite=0',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_unicode_ci',
    '--max-connections=300',
    ...extra,
  ];
  const proc = spawnManaged(bin, args, { name: `mariadbd:${port}` });
  try {
    await proc.waitForOutput(READY, timeoutMs);
    // The banner comes after --init-file ran; still prove the password works over TCP.
    const conn = await connect(port, password);
    await conn.end();
    return proc;
  } catch (err) {
    await proc.kill();
    throw new Error(`mariadbd:${port} failed to start\n${tail(proc.output())}`, { cause: err });
  }
}

function connect(port: number, password: string, database?: string): Promise<Connection> {
  return createConnection({ host: HOST, port, user: USER, password, database, connectTimeout: 5000 });
}

function handle(
  dir: TmpDir,
  port: number,
  password: string,
  database: string,
  launcher: () => Promise<ManagedProcess>,
  first: ManagedProcess,
  timings: MariaDbTimings,
): MariaDbServer {
  let proc = first;
  let stopped = false;
  const urlFor = (db: string): string =>
    `mysql://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${encodeURIComponent(db)}`;
  const server: MariaDbServer = {
    host: HOST,
    port,
    user: USER,
    password,
    database,
    url: urlFor(database),
    socketPath: join(dir.path, 'mysqld.sock'),
    timings,
    urlFor,
    isRunning: () => proc.isRunning(),
    logs: () => proc.output(),
    async createDatabase(name) {
      const db = name ?? `t${process.pid}_${++dbCounter}_${randomBytes(3).toString('hex')}`;
      if (!DB_NAME.test(db)) throw new Error(`createDatabase: bad database name ${db}`);
      const conn = await connect(port, password);
      try {
        await conn.query(`DROP DATABASE IF EXISTS \`${db}\``);
        await conn.query(`CREATE DATABASE \`${db}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      } finally {
        await conn.end();
      }
      return urlFor(db);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await proc.stop({ timeoutMs: 10_000 });
      dir.remove();
    },
    async kill() {
      await proc.kill();
    },
    pause: () => proc.signal('SIGSTOP'),
    paused: () => proc.stopped(),
    resume: () => proc.signal('SIGCONT'),
    async restart() {
      if (stopped) throw new Error(`mariadbd:${port} was stopped for good; start a new one`);
      await proc.stop({ timeoutMs: 10_000 });
      let lastError: unknown;
      for (let i = 0; i < 5; i++) {
        try {
          proc = await launcher();
          return;
        } catch (err) {
          lastError = err;
          await sleep(200 * (i + 1));
        }
      }
      throw new Error(`mariadbd:${port} could not restart on the same port`, { cause: lastError });
    },
  };
  return server;
}
