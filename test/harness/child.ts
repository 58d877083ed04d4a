/**
 * A child process the harness owns: output captured (last 256 KiB), readiness by output pattern,
 * graceful or brutal stop, and registration for last-resort cleanup (cleanup.ts).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { registerPid } from './cleanup.ts';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all (e.g. ENOENT). */
  error?: Error;
}

export interface SpawnOptions {
  /** Name used in error messages. Default: the command. */
  name?: string;
  cwd?: string;
  /** Full environment of the child. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** How many characters of output to keep. Default 256 KiB. */
  outputLimit?: number;
}

export interface ManagedProcess {
  readonly name: string;
  /** undefined only when spawning failed (then `exited` is already settled with `error`). */
  readonly pid: number | undefined;
  /** Settles once when the process ends; never rejects. */
  readonly exited: Promise<ExitInfo>;
  isRunning(): boolean;
  /** Captured stdout and stderr, interleaved, most recent `outputLimit` characters. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output (past or future); rejects on exit or timeout. */
  waitForOutput(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  signal(sig: NodeJS.Signals): void;
  /** Sends `signal` (default SIGTERM), escalates to SIGKILL after `timeoutMs` (default 5000). */
  stop(opts?: { signal?: NodeJS.Signals; timeoutMs?: number }): Promise<ExitInfo>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<ExitInfo>;
  /**
   * Resolves once every thread of the process is stopped (after signal('SIGSTOP')). kill() only queues
   * the stop: a thread busy on the other core can still answer a request sent right after it (seen on
   * the loaded CI machine: a statement to a just-SIGSTOPped MariaDB answered in 20 ms). Linux only;
   * elsewhere it resolves at once.
   */
  stopped(timeoutMs?: number): Promise<void>;
}

export function spawnManaged(command: string, args: readonly string[], opts: SpawnOptions = {}): ManagedProcess {
  const name = opts.name ?? command;
  const limit = opts.outputLimit ?? 256 * 1024;
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buffer = '';
  let running = child.pid !== undefined;
  const unregister = child.pid !== undefined ? registerPid(child.pid) : () => undefined;
  const listeners = new Set<() => void>();

  // Cut back to `limit` only once past twice it: a cut copies the whole kept text, and cutting at every
  // chunk copied 256 KiB per log line (a fleet-kill shard logs ~500 lines a second: the bench holding the
  // three shards' pipes took 16 % of a core while they registered devices)
  const onData = (chunk: Buffer): void => {
    buffer += chunk.toString('utf8');
    if (buffer.length > 2 * limit) buffer = buffer.slice(buffer.length - limit);
    for (const l of [...listeners]) l();
  };
  const kept = (): string => (buffer.length > limit ? buffer.slice(buffer.length - limit) : buffer);
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);

  const exited = new Promise<ExitInfo>((resolve) => {
    child.on('error', (error) => {
      // 'error' without 'exit' means the spawn itself failed
      if (child.pid === undefined) {
        running = false;
        resolve({ code: null, signal: null, error });
      }
    });
    child.once('exit', (code, signal) => {
      running = false;
      unregister();
      resolve({ code, signal });
    });
  });
  void exited.then(() => {
    for (const l of [...listeners]) l();
  });

  const handle: ManagedProcess = {
    name,
    pid: child.pid,
    exited,
    isRunning: () => running,
    output: kept,
    waitForOutput(pattern, timeoutMs = 10_000) {
      return new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const m = typeof pattern === 'string' ? (buffer.includes(pattern) ? pattern : null) : pattern.exec(buffer)?.[0];
          if (m !== null && m !== undefined) return done(() => resolve(m));
          if (!running) {
            done(() => reject(new Error(`${name} exited before printing ${String(pattern)}\n${tail(buffer)}`)));
          }
        };
        const timer = setTimeout(() => {
          done(() => reject(new Error(`${name} did not print ${String(pattern)} within ${timeoutMs} ms\n${tail(buffer)}`)));
        }, timeoutMs);
        const done = (settle: () => void): void => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
    signal(sig) {
      if (!running || child.pid === undefined) return;
      try {
        process.kill(child.pid, sig);
      } catch {
        // raced with exit
      }
    },
    async stop(stopOpts = {}) {
      if (!running) return exited;
      handle.signal(stopOpts.signal ?? 'SIGTERM');
      handle.signal('SIGCONT'); // a SIGSTOPped process would never act on SIGTERM
      const timeoutMs = stopOpts.timeoutMs ?? 5000;
      let timer: NodeJS.Timeout | undefined;
      const escalate = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          handle.signal('SIGKILL');
          resolve();
        }, timeoutMs);
      });
      await Promise.race([exited, escalate]);
      clearTimeout(timer);
      return exited;
    },
    async kill() {
      handle.signal('SIGKILL');
      return exited;
    },
    async stopped(timeoutMs = 2000) {
      if (child.pid === undefined) return;
      const deadline = performance.now() + timeoutMs;
      while (!allThreadsStopped(child.pid)) {
        if (performance.now() > deadline) throw new Error(`${name}: not stopped ${timeoutMs} ms after SIGSTOP`);
        await new Promise((r) => setTimeout(r, 2));
      }
    },
  };
  return handle;
}

/** Last lines of some output, for error messages. */
export function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** Every thread of `pid` in state T (stopped) or t (traced); true where /proc cannot tell (not Linux). */
function allThreadsStopped(pid: number): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return tasks.every((t) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state === 'T' || state === 't';
    } catch {
      return true; // the thread ended
    }
  });
}
