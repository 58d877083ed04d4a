/**
 * Runs SIPp (Debian `sip-tester`) as a child process. Success is judged by SIPp's exit code
 * (0 = every call succeeded, 1 = at least one failed, 99 = no call processed, 255/254 = fatal), with
 * the unexpected-message log (`-trace_err`), the message trace (`-trace_msg`) and the final line of
 * the statistics CSV (`-trace_stat`) kept in a temp dir for assertions and diagnostics. The screen
 * output is kept only as a tail for error messages: it is not a stable format.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBinary } from './binaries.ts';
import { spawnManaged, tail } from './child.ts';
import { tmpDir } from './tmp.ts';

export type SippTransport = 'u1' | 'un' | 'ui' | 't1' | 'tn';

export interface SippOptions {
  /** Path of a scenario XML file (`-sf`), or a built-in scenario name (`-sn`, e.g. "uac", "uas"). */
  scenario: string | { builtin: string };
  /** Remote `host:port` for client scenarios. Omit for server scenarios. */
  remote?: string;
  /** Local SIP port (`-p`). Default: SIPp picks a free one. */
  localPort?: number;
  /** Local IP (`-i`). Default 127.0.0.1. */
  localIp?: string;
  /** Stop after this many calls (`-m`). Omit for a server that runs until stopped. */
  calls?: number;
  /** Call rate per period (`-r`), period in ms (`-rp`, default 1000). */
  rate?: number;
  ratePeriodMs?: number;
  /** Max simultaneous calls (`-l`). */
  limit?: number;
  transport?: SippTransport;
  /** Injection CSV files (`-inf`, repeatable); see writeInjectionCsv(). */
  injectionFiles?: readonly string[];
  /** `-key name value` pairs, usable as [name] in the scenario. */
  keys?: Readonly<Record<string, string>>;
  /** Global receive timeout (`-recv_timeout`, ms): a call waiting longer for a message fails. */
  recvTimeoutMs?: number;
  /** Kill SIPp (SIGKILL) after this long; the result then has timedOut = true. Default 60 s. */
  timeoutMs?: number;
  /** Record every message (`-trace_msg`). Default true; turn off for load runs. */
  traceMessages?: boolean;
  extraArgs?: readonly string[];
}

export interface SippStats {
  created: number;
  successful: number;
  failed: number;
}

export interface SippResult {
  /** 0 when every call succeeded. null when killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** exitCode === 0 */
  ok: boolean;
  /** Contents of the -trace_err log ('' when there were no unexpected messages). */
  errors: string;
  /** Contents of the -trace_msg log ('' when tracing was off). */
  messages: string;
  /** Cumulative counters from the last row of the -trace_stat CSV, when SIPp wrote one. */
  stats: SippStats | null;
  /** Tail of SIPp's screen output, for error messages only. */
  output: string;
  /** The temp dir holding the logs; removed when the run ends unless SIPP_KEEP_LOGS is set. */
  dir: string;
}

export interface SippRun {
  readonly pid: number | undefined;
  /** The temp dir SIPp writes its logs to (readable while it runs, e.g. the -fd statistics rows). */
  readonly dir: string;
  /** Resolves when SIPp exits; never rejects. */
  readonly done: Promise<SippResult>;
  /** SIGTERM (SIGKILL after 2 s), e.g. to end a server scenario. */
  stop(): Promise<SippResult>;
  kill(): Promise<SippResult>;
}

export function runSipp(opts: SippOptions): SippRun {
  const bin = requireBinary('sip-tester', 'sipp');
  const dir = tmpDir('vms-sipp-');
  const files = {
    errors: join(dir.path, 'errors.log'),
    messages: join(dir.path, 'messages.log'),
    stats: join(dir.path, 'stats.csv'),
  };
  const args = buildArgs(opts, files);
  const proc = spawnManaged(bin, args, { name: 'sipp', cwd: dir.path, outputLimit: 64 * 1024 });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.signal('SIGKILL');
  }, opts.timeoutMs ?? 60_000);

  const done = proc.exited.then((exit): SippResult => {
    clearTimeout(timer);
    const result: SippResult = {
      exitCode: exit.code,
      signal: exit.signal,
      timedOut,
      ok: exit.code === 0,
      errors: readIfExists(files.errors),
      messages: readIfExists(files.messages),
      stats: parseStats(readIfExists(files.stats)),
      output: exit.error !== undefined ? String(exit.error) : tail(proc.output(), 40),
      dir: dir.path,
    };
    if (process.env.SIPP_KEEP_LOGS === undefined) dir.remove();
    return result;
  });
  return {
    pid: proc.pid,
    dir: dir.path,
    done,
    async stop() {
      await proc.stop({ timeoutMs: 2000 });
      return done;
    },
    async kill() {
      await proc.kill();
      return done;
    },
  };
}

function buildArgs(opts: SippOptions, files: { errors: string; messages: string; stats: string }): string[] {
  const args: string[] = [];
  if (typeof opts.scenario === 'string') args.push('-sf', opts.scenario);
  else args.push('-sn', opts.scenario.builtin);
  if (opts.remote !== undefined) args.push(opts.remote);
  args.push('-i', opts.localIp ?? '127.0.0.1');
  if (opts.localPort !== undefined) args.push('-p', String(opts.localPort));
  if (opts.calls !== undefined) args.push('-m', String(opts.calls));
  if (opts.rate !== undefined) args.push('-r', String(opts.rate));
  if (opts.ratePeriodMs !== undefined) args.push('-rp', String(opts.ratePeriodMs));
  if (opts.limit !== undefined) args.push('-l', String(opts.limit));
  if (opts.transport !== undefined) args.push('-t', opts.transport);
  for (const f of opts.injectionFiles ?? []) args.push('-inf', f);
  for (const [k, v] of Object.entries(opts.keys ?? {})) args.push('-key', k, v);
  if (opts.recvTimeoutMs !== undefined) args.push('-recv_timeout', String(opts.recvTimeoutMs));
  args.push('-nostdin', '-trace_err', '-error_file', files.errors);
  args.push('-trace_stat', '-stf', files.stats);
  if (opts.traceMessages ?? true) args.push('-trace_msg', '-message_file', files.messages);
  args.push(...(opts.extraArgs ?? []));
  return args;
}

/** Parses the cumulative columns of the last row of a SIPp -trace_stat CSV. */
export function parseStats(csv: string): SippStats | null {
  const rows = csv.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const header = rows[0]?.split(';');
  const last = rows.length > 1 ? rows[rows.length - 1]?.split(';') : undefined;
  if (header === undefined || last === undefined) return null;
  const col = (name: string): number => {
    const i = header.indexOf(name);
    const v = i >= 0 ? Number(last[i]) : NaN;
    return Number.isFinite(v) ? v : NaN;
  };
  const stats = { created: col('TotalCallCreated'), successful: col('SuccessfulCall(C)'), failed: col('FailedCall(C)') };
  return Object.values(stats).some((v) => Number.isNaN(v)) ? null : stats;
}

export type InjectionOrder = 'SEQUENTIAL' | 'RANDOM' | 'USER';

/**
 * Writes a SIPp injection CSV (first line: read order, then one `;`-separated row per call) into a
 * fresh temp dir removed at process exit, and returns its path.
 */
export function writeInjectionCsv(rows: ReadonlyArray<readonly string[]>, order: InjectionOrder = 'SEQUENTIAL'): string {
  const dir = tmpDir('vms-sipp-inf-');
  const path = join(dir.path, 'inject.csv');
  writeFileSync(path, [order, ...rows.map((r) => r.join(';'))].join('\n') + '\n');
  return path;
}

function readIfExists(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
