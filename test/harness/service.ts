/**
 * Starts a service under test (usually a platform instance) as a child process with its own
 * environment, and waits until it is ready: a line on stdout/stderr, an HTTP 200 from a health URL,
 * or both. When the process exits before it is ready (typically a port taken between freePort() and
 * bind), it is started again with a fresh environment from the `env` factory.
 */
import { spawnManaged, tail, type ExitInfo, type ManagedProcess } from './child.ts';
import { waitFor } from './wait.ts';

export type ServiceEnv = Readonly<Record<string, string | undefined>>;

export interface StartServiceOptions {
  /** Executable. Default: this Node binary. */
  command?: string;
  args: readonly string[];
  /** Extra variables on top of process.env (undefined removes one). A factory is called per attempt. */
  env?: ServiceEnv | (() => ServiceEnv | Promise<ServiceEnv>);
  cwd?: string;
  /** Ready when the output matches this. */
  readyLine?: RegExp | string;
  /** Ready when GET of this URL (or the factory's result for this attempt's env) answers 200. */
  healthUrl?: string | ((env: ServiceEnv) => string);
  startTimeoutMs?: number;
  /** Attempts when the process exits before being ready. Default 3. */
  attempts?: number;
  name?: string;
}

export interface ServiceProcess {
  readonly name: string;
  readonly pid: number | undefined;
  /** The environment overrides this attempt ran with (ports chosen by the factory etc.). */
  readonly env: ServiceEnv;
  readonly exited: Promise<ExitInfo>;
  isRunning(): boolean;
  output(): string;
  waitForOutput(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** SIGTERM (or `signal`), SIGKILL after `timeoutMs` (default 5000). */
  stop(opts?: { signal?: NodeJS.Signals; timeoutMs?: number }): Promise<ExitInfo>;
  kill(): Promise<ExitInfo>;
}

export async function startService(opts: StartServiceOptions): Promise<ServiceProcess> {
  const attempts = opts.attempts ?? 3;
  const name = opts.name ?? 'service';
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    const env = typeof opts.env === 'function' ? await opts.env() : (opts.env ?? {});
    const proc = spawnManaged(opts.command ?? process.execPath, opts.args, {
      name,
      cwd: opts.cwd,
      env: mergeEnv(env),
    });
    try {
      await whenReady(proc, opts, env);
      return wrap(proc, env);
    } catch (err) {
      lastError = err;
      await proc.kill();
    }
  }
  throw new Error(`${name}: not ready after ${attempts} attempt(s)`, { cause: lastError });
}

/** Node arguments that run a TypeScript entry point through tsx (resolved from the repo root). */
export function tsxArgs(entry: string, ...rest: string[]): string[] {
  return ['--import', 'tsx', entry, ...rest];
}

async function whenReady(proc: ManagedProcess, opts: StartServiceOptions, env: ServiceEnv): Promise<void> {
  const timeoutMs = opts.startTimeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  if (opts.readyLine !== undefined) await proc.waitForOutput(opts.readyLine, timeoutMs);
  const health = typeof opts.healthUrl === 'function' ? opts.healthUrl(env) : opts.healthUrl;
  if (health !== undefined) {
    // An exit during start-up must end the wait at once, not after the whole timeout.
    const abort = new AbortController();
    void proc.exited.then(() => abort.abort(new Error(`${proc.name} exited during start-up`)));
    await waitFor(
      async () => {
        const res = await fetch(health, { signal: AbortSignal.timeout(1000) });
        await res.body?.cancel();
        return res.status === 200;
      },
      {
        timeoutMs: Math.max(0, deadline - Date.now()),
        intervalMs: 50,
        description: `${health} answering 200`,
        signal: abort.signal,
      },
    ).catch((err: unknown) => {
      throw new Error(`${proc.name} not healthy\n${tail(proc.output())}`, { cause: err });
    });
  }
  if (!proc.isRunning()) throw new Error(`${proc.name} exited during start-up\n${tail(proc.output())}`);
}

function mergeEnv(overrides: ServiceEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

function wrap(proc: ManagedProcess, env: ServiceEnv): ServiceProcess {
  return {
    name: proc.name,
    pid: proc.pid,
    env,
    exited: proc.exited,
    isRunning: () => proc.isRunning(),
    output: () => proc.output(),
    waitForOutput: (p, t) => proc.waitForOutput(p, t),
    stop: (o) => proc.stop(o),
    kill: () => proc.kill(),
  };
}
