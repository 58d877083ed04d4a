/**
 * A throw-away `redis-server` on 127.0.0.1: no persistence, port from the OS, data dir in a temp dir.
 * `kill()` / `pause()` / `restart()` (same port) let tests play "Redis crashed", "Redis hangs" and
 * "Redis came back" (SPEC FAIL-3).
 */
import { requireBinary } from './binaries.ts';
import { spawnManaged, tail, type ManagedProcess } from './child.ts';
import { freePort } from './ports.ts';
import { tmpDir, type TmpDir } from './tmp.ts';
import { sleep } from './wait.ts';

export const HOST = '127.0.0.1';
const READY = /Ready to accept connections/;

export interface StartRedisOptions {
  /** Fixed port (then a clash is not retried). Default: a free port from the OS. */
  port?: number;
  /**
   * Extra redis-server arguments. A function is called once per port attempt (so it can pick more
   * free ports, e.g. a cluster bus port); its result is reused by `restart()`.
   */
  args?: readonly string[] | ((port: number) => readonly string[] | Promise<readonly string[]>);
  startTimeoutMs?: number;
  /** Name in error messages. Default "redis". */
  name?: string;
}

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  /** Working directory (nodes.conf lives here in cluster mode). */
  readonly dir: string;
  isRunning(): boolean;
  /** Output of the current (or last) process. */
  logs(): string;
  /** Final teardown: SIGTERM (SIGKILL after 3 s), remove the directory. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL, keeping port and directory for `restart()` (crash simulation). */
  kill(): Promise<void>;
  /** Stops if running, then starts again on the same port and directory. */
  restart(): Promise<void>;
  /** SIGSTOP: the socket stays open but nothing answers (hung server). */
  pause(): void;
  /** Resolves once the paused server's every thread is stopped (pause() only queues the signal). */
  paused(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
}

export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const bin = requireBinary('redis-server', 'redis-server');
  const name = opts.name ?? 'redis';
  const dir = tmpDir('vms-redis-');
  const attempts = opts.port === undefined ? 5 : 1;
  const timeoutMs = opts.startTimeoutMs ?? 10_000;
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    const port = opts.port ?? (await freePort());
    const extra = typeof opts.args === 'function' ? await opts.args(port) : (opts.args ?? []);
    try {
      const proc = await launch(bin, name, dir.path, port, extra, timeoutMs);
      return handle(bin, name, dir, port, extra, timeoutMs, proc);
    } catch (err) {
      lastError = err; // most likely the port was taken meanwhile: try another
    }
  }
  dir.remove();
  throw new Error(`${name}: could not start after ${attempts} attempt(s)`, { cause: lastError });
}

async function launch(
  bin: string,
  name: string,
  dir: string,
  port: number,
  extra: readonly string[],
  timeoutMs: number,
): Promise<ManagedProcess> {
  const args = [
    '--port', String(port),
    '--bind', HOST,
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
    '--daemonize', 'no',
    '--protected-mode', 'no',
    '--logfile', '',
    '--loglevel', 'notice',
    ...extra,
  ];
  const proc = spawnManaged(bin, args, { name: `${name}:${port}`, cwd: dir });
  try {
    await proc.waitForOutput(READY, timeoutMs);
    return proc;
  } catch (err) {
    await proc.kill();
    throw new Error(`${name}:${port} failed to start\n${tail(proc.output())}`, { cause: err });
  }
}

function handle(
  bin: string,
  name: string,
  dir: TmpDir,
  port: number,
  extra: readonly string[],
  timeoutMs: number,
  first: ManagedProcess,
): RedisServer {
  let proc = first;
  let stopped = false;
  const server: RedisServer = {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    dir: dir.path,
    isRunning: () => proc.isRunning(),
    logs: () => proc.output(),
    async stop() {
      if (stopped) return;
      stopped = true;
      await proc.stop({ timeoutMs: 3000 });
      dir.remove();
    },
    async kill() {
      await proc.kill();
    },
    async restart() {
      if (stopped) throw new Error(`${name}:${port} was stopped for good; start a new one`);
      await proc.stop({ timeoutMs: 3000 });
      let lastError: unknown;
      // Same port by contract; a just-closed listener may need a moment to be reusable.
      for (let i = 0; i < 5; i++) {
        try {
          proc = await launch(bin, name, dir.path, port, extra, timeoutMs);
          return;
        } catch (err) {
          lastError = err;
          await sleep(100 * (i + 1));
        }
      }
      throw new Error(`${name}:${port} could not restart on the same port`, { cause: lastError });
    },
    pause: () => proc.signal('SIGSTOP'),
    paused: () => proc.stopped(),
    resume: () => proc.signal('SIGCONT'),
  };
  return server;
}
