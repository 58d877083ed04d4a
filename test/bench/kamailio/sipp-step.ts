// One SIPp load step against a server (Kamailio or the platform) with the server's CPU read from /proc
// around it: the method of the issue-11 harness's run-rate.sh (pass = < 0.1 % failed or unfinished, no
// timeout failures, ≥ 95 % of the offered rate achieved; clean = pass and < 0.1 % retransmissions), in
// TypeScript so test/bench needs nothing beside the repository.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runSipp } from '@vms/harness';
import { cpuSeconds } from './proc.ts';

export const SERVER_ID = '34020000002000000001';
export const DOMAIN = SERVER_ID.slice(0, 10);
const MAX_FAIL_RATIO = 0.001;
const MAX_RETRANS_RATIO = 0.001;
const MIN_ACHIEVED = 0.95;

export interface StepOptions {
  readonly scenario: string;
  readonly remote: string;
  readonly localPort: number;
  readonly rate: number;
  readonly calls: number;
  readonly injectionFile: string;
  /** Processes whose CPU is the server's (Kamailio: main + workers; the platform: its node process). */
  readonly serverPids: () => readonly number[];
  /** Billed separately, e.g. redis-server behind the platform. */
  readonly sidePids?: () => readonly number[];
  readonly recvTimeoutMs?: number;
  /**
   * 'u1' (default): every call from one SIPp socket, `localPort`. 'un': a socket per call, i.e. per
   * device, as a real fleet sends: each call has its own source port, which is what the kernel's
   * SO_REUSEPORT hash spreads over instances sharing one port (with 'u1' all land on one of them).
   */
  readonly transport?: 'u1' | 'un';
}

/**
 * With -t un SIPp refuses to start when its socket bound (default 50,000) is above the open-file limit
 * (20,000 here); 16,000 concurrent calls is far above what any step holds while it passes.
 */
const MAX_SOCKETS_UN = 16_000;

export interface StepResult {
  readonly rate: number;
  readonly calls: number;
  readonly ok: number;
  readonly failed: number;
  readonly unfinished: number;
  readonly retrans: number;
  readonly timeouts: number;
  /** Answered calls per second of wall time. */
  readonly achieved: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Server CPU (utime+stime) per answered call, µs. */
  readonly cpuUs: number;
  /** Side processes' CPU per answered call, µs (0 without side processes). */
  readonly sideCpuUs: number;
  readonly pass: boolean;
  readonly clean: boolean;
  /** Final status codes SIPp saw that the scenario did not expect. */
  readonly unexpected: number;
  /** 503 answers received (register_auth_storm.xml takes them as an outcome; -trace_counts). */
  readonly shed: number;
}

function lastStats(dir: string): Record<string, number> {
  const file = readdirSync(dir).find((f) => f.startsWith('stats') && f.endsWith('.csv'));
  const rows = file === undefined ? [] : readFileSync(join(dir, file), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const head = rows[0]?.split(';') ?? [];
  const last = rows.at(-1)?.split(';') ?? [];
  return Object.fromEntries(head.map((h, i) => [h, Number(last[i])]));
}

/** Sum of the `N_503_Recv` columns of SIPp's -trace_counts file (last row). */
function shedCount(dir: string): number {
  const file = readdirSync(dir).find((f) => f.endsWith('_counts.csv'));
  const rows = file === undefined ? [] : readFileSync(join(dir, file), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const head = rows[0]?.split(';') ?? [];
  const last = rows.at(-1)?.split(';') ?? [];
  return head.reduce((sum, h, i) => (/^\d+_503_Recv$/.test(h) ? sum + Number(last[i] ?? 0) : sum), 0);
}

/** RTD 1 response times, ms, from SIPp's -trace_rtt file(s). */
export function responseTimes(dir: string): number[] {
  const out: number[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('_rtt.csv'))) {
    const lines = readFileSync(join(dir, f), 'utf8').split('\n');
    const head = lines[0]?.split(';') ?? [];
    const col = head.findIndex((h) => h.startsWith('rtd1'));
    for (const l of lines.slice(1)) {
      const v = Number(l.split(';')[col < 0 ? 1 : col]);
      if (Number.isFinite(v) && l.trim() !== '') out.push(v);
    }
  }
  return out;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

export async function sippStep(o: StepOptions): Promise<StepResult> {
  process.env['SIPP_KEEP_LOGS'] = '1'; // the logs are read here, then removed
  const cpu0 = cpuSeconds(o.serverPids());
  const side0 = o.sidePids === undefined ? 0 : cpuSeconds(o.sidePids());
  const started = performance.now();
  const recvTimeoutMs = o.recvTimeoutMs ?? 5000;
  const run = runSipp({
    scenario: o.scenario,
    remote: o.remote,
    localPort: o.localPort,
    transport: o.transport ?? 'u1',
    calls: o.calls,
    rate: o.rate,
    limit: Math.max(1000, o.rate * 2),
    injectionFiles: [o.injectionFile],
    keys: { gb_server: SERVER_ID, gb_domain: DOMAIN, gb_expires: '3600' },
    traceMessages: false,
    recvTimeoutMs,
    timeoutMs: (o.calls / o.rate) * 1000 + recvTimeoutMs + 60_000,
    extraArgs: ['-auth_uri', `${SERVER_ID}@${DOMAIN}`, '-buff_size', String(4 * 1024 * 1024), '-trace_rtt', '-rtt_freq', '100', '-trace_counts', '-max_recv_loops', '10000', '-max_sched_loops', '10000', ...(o.transport === 'un' ? ['-max_socket', String(MAX_SOCKETS_UN)] : [])],
  });
  const r = await run.done;
  const wall = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(o.serverPids()) - cpu0;
  const side = o.sidePids === undefined ? 0 : cpuSeconds(o.sidePids()) - side0;
  const s = lastStats(r.dir);
  const rtts = responseTimes(r.dir);
  const shed = shedCount(r.dir);
  rmSync(r.dir, { recursive: true, force: true });
  if (r.exitCode !== null && r.exitCode > 1) throw new Error(`SIPp failed (exit ${r.exitCode}):\n${r.output}\n${r.errors.slice(0, 2000)}`);
  const ok = s['SuccessfulCall(C)'] ?? 0;
  const failed = s['FailedCall(C)'] ?? 0;
  const retrans = s['Retransmissions(C)'] ?? 0;
  const timeouts = (s['FailedTimeoutOnRecv(C)'] ?? 0) + (s['FailedMaxUDPRetrans(C)'] ?? 0);
  const unfinished = Math.max(0, o.calls - ok - failed);
  // answers per second over the run, less 1 s for SIPp's start and exit: a server that falls behind
  // stretches the run past calls/rate and so shows below the offered rate
  const achieved = ok / Math.max(o.calls / o.rate, wall - 1);
  const pass = (failed + unfinished) / o.calls < MAX_FAIL_RATIO && timeouts === 0 && achieved >= MIN_ACHIEVED * o.rate;
  return {
    rate: o.rate,
    calls: o.calls,
    ok,
    failed,
    unfinished,
    retrans,
    timeouts,
    achieved,
    p50Ms: percentile(rtts, 50),
    p99Ms: percentile(rtts, 99),
    cpuUs: ok > 0 ? (cpu * 1e6) / ok : NaN,
    sideCpuUs: ok > 0 ? (side * 1e6) / ok : NaN,
    pass,
    clean: pass && retrans / o.calls < MAX_RETRANS_RATIO,
    unexpected: s['FailedUnexpectedMessage(C)'] ?? 0,
    shed,
  };
}

/** 20-digit device ids `3402000000132` + 7-digit serial from `first`, with the digest credentials SIPp injects. */
export function deviceRows(first: number, count: number, password: string): string[][] {
  return Array.from({ length: count }, (_, i) => {
    const id = `3402000000132${String(first + i).padStart(7, '0')}`;
    return [id, password, `[authentication username=${id} password=${password}]`];
  });
}
