// Instructions per REGISTER + digest registration (issue 11, target 1), the platform beside Kamailio 5.6
// in the same run, counted with callgrind: a figure that does not move when other work shares the
// machine (fleet.ts's /proc CPU figures inflate with the load, and not equally for a C server and a JIT).
// Run from the repository root: npx tsx test/bench/register-callgrind.ts [--quick] [--redis] [--warmup W]
//   [--count M] [--in-flight N] [--no-settle] [--keep] [--perf-map] [--no-kamailio | --no-project]
//   or --cpu-prof: no valgrind, the platform under `node --cpu-prof`, top self times printed (where to look next)
//
//  1. starts, under `valgrind --tool=callgrind --instr-atstart=no`, the whole platform as `npm start` runs
//     it (services/signaling createApp: embedded SQLite store in a throwaway data directory, HTTP, cascade
//     triggers, the REGISTER shedder; with --redis also Redis ownership against a redis-server started by
//     the harness, not counted) with a platform password, and Kamailio (test/bench/kamailio: registrar +
//     in-memory usrloc, fixed-password MD5 digest, 1 UDP worker, `-x fm`) likewise;
//  2. registers W fresh device ids (default 3,000) one at a time (--in-flight N: N at a time) to warm up
//     (JIT tiers, caches): REGISTER, 401 with the challenge, REGISTER with the digest answer (@vms/sip
//     buildAuthorization), 200; then settles (unless --no-settle, the method before 2 Dec 15:30 UTC): a
//     full collection (node with --expose-gc, SIGUSR2), then blocks of SETTLE_BLOCK registrations until
//     two in a row pass without a --trace-opt/--trace-deopt line, as edge-callgrind.ts does; then
//     zeroes the platform's counters, switches instrumentation on, registers M more (default 1,000),
//     switches it off and dumps (per thread). The driver's devices never keep alive: the platform holds
//     them online for the 3,600 s they registered for, as Kamailio holds the binding (else the offline
//     scan's transitions of devices silent for 180 s land in a long run's window). Kamailio forks its workers, which callgrind_control cannot reach (no
//     vgdb FIFO after fork): it runs twice, counted whole from start to exit in every process, with W and
//     with W + M registrations, and the difference is divided by M;
//  3. prints instructions (Ir, user space, all threads of the server) per registration for
//     both, and the ratio, then the project's window split (callgrind-v8.ts) into GC, JIT and the rest,
//     with the tier-up lines in the window (--no-settle: the compiler's and GC's shares as before). Everything the server does during the counted window is billed (timers, GC,
//     the write-behind flush), so the figure is the cost per registration at the ping-pong pace valgrind
//     allows; callgrind_annotate on the kept files (--keep; --perf-map names the JIT frames) shows where.
// The kernel's share (UDP send and receive) is not in the count for either side.
import { buildAuthorization } from '@vms/sip';
import { freePort, requireBinaryIn, startRedis, tmpDir, type RedisServer } from '@vms/harness';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { v8Shares } from './callgrind-v8.ts';
import { KAMAILIO_PASSWORD } from './kamailio/kamailio.ts';
import { isQuick, printSummary } from './summary.ts';

const SELF = fileURLToPath(import.meta.url);
const HERE = dirname(SELF);
const SERVER_ID = '34020000002000000001';
const DOMAIN = SERVER_ID.slice(0, 10);
const TARGET_RATIO = 3;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
const QUICK = isQuick();
const WARMUP = Number(arg('warmup', QUICK ? '1000' : '3000'));
const COUNT = Number(arg('count', QUICK ? '500' : '1000'));
/**
 * Registrations the driver keeps in flight (`--in-flight N`, default 1: one at a time, each answered before
 * the next, as all figures before 2 Dec 16:00 UTC). Work the server does per period (timers, the write-behind
 * flush, the offline scan) is billed per registration at the pace valgrind allows: more in flight, closer
 * to a storm's pace, where such work is shared by more registrations.
 */
const IN_FLIGHT = Math.max(1, Number(arg('in-flight', '1')));
/** `--no-settle`: the method before 2 Dec 15:30 UTC (the window straight after the warm-up; JIT and GC shares vary run to run). */
const SETTLE = !process.argv.includes('--no-settle');
/** The JIT has settled when SETTLE_QUIET_BLOCKS blocks of SETTLE_BLOCK registrations in a row pass with no tier-up or deopt line. */
const SETTLE_BLOCK = 250;
const SETTLE_QUIET_BLOCKS = 2;
const SETTLE_MAX_BLOCKS = 24;
/** Missed keepalives (60 s each) before a device is offline: the registrations' Expires (3,600 s), for the silent driver. */
const SILENT_KEEPALIVES = 60;
/**
 * The REGISTER shedder decides by the receive queue only (utilization high mark 100 %, never passed). Since
 * 2 Dec 20:00 UTC (b5dd326) the /proc/net/udp read is paced to 2 % of wall time and the windows between
 * reads decide by event-loop utilization, which under valgrind (everything ~50× slower, the loop never
 * idle) reads busy: the bench's one-at-a-time driver was shed with 503, every registration failed. The
 * queue, which a ping-pong driver never fills, still decides in the windows it is read.
 */
const SHED_BY_QUEUE_ONLY = { VMS_LIMITS_REGISTER_SHED_UTILIZATION_HIGH: '100' };
/** --trace-opt / --trace-deopt lines: a function marked, compiled, installed or deoptimized (as edge-callgrind.ts). */
const JIT_LINE = /^\[(marking|compiling method|completed (compiling|optimizing)|bailout|deoptimiz)/gm;

/** Server mode, under valgrind: the platform as main.ts builds it, READY once its SIP port is bound. */
async function servePlatform(): Promise<void> {
  const { loadConfig } = await import('../../services/signaling/src/config/load.ts');
  const { createApp } = await import('../../services/signaling/src/app.ts');
  const app = createApp(loadConfig([], process.env));
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  // bench-only control (node with --expose-gc): SIGUSR2 = a full collection now, GC-DONE when it is over
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    process.on('SIGUSR2', () => {
      gc();
      process.stdout.write('GC-DONE\n');
    });
  }
  await app.start();
  process.stdout.write(`READY ${process.env['VMS_GB28181_SIP_PORT']}\n`);
}

const deviceIdOf = (i: number): string => `3402000000132${String(i + 1).padStart(7, '0')}`;

/** Registers devices first..first+n-1, IN_FLIGHT at a time (a leg resent every 2 s while unanswered); returns the failures. */
async function drive(port: number, first: number, n: number): Promise<number> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const local = sock.address().port;
  const uri = `sip:${SERVER_ID}@${DOMAIN}`;
  const register = (i: number, cseq: number, authorization: string | null): Buffer => {
    const id = deviceIdOf(i);
    return Buffer.from(
      `REGISTER ${uri} SIP/2.0\r\n` +
        `Via: SIP/2.0/UDP 127.0.0.1:${local};rport;branch=z9hG4bK-rc-${i}-${cseq}\r\n` +
        `From: <sip:${id}@${DOMAIN}>;tag=rc${i}\r\n` +
        `To: <sip:${id}@${DOMAIN}>\r\n` +
        `Call-ID: rc-${i}@bench\r\n` +
        `CSeq: ${cseq} REGISTER\r\n` +
        `Contact: <sip:${id}@127.0.0.1:${local}>\r\n` +
        (authorization === null ? '' : `Authorization: ${authorization}\r\n`) +
        'Max-Forwards: 70\r\nUser-Agent: sipp-gb28181-bench\r\nExpires: 3600\r\nContent-Length: 0\r\n\r\n',
      'latin1',
    );
  };
  let started = first;
  let failed = 0;
  /** Registrations in flight: device index → the leg (CSeq) sent last and its resend timer. */
  const lanes = new Map<number, { cseq: number; timer: NodeJS.Timeout }>();
  await new Promise<void>((done) => {
    const send = (i: number, cseq: number, m: Buffer): void => {
      clearInterval(lanes.get(i)?.timer);
      sock.send(m, port, '127.0.0.1');
      // also waits out a server still starting
      lanes.set(i, { cseq, timer: setInterval(() => sock.send(m, port, '127.0.0.1'), 2000) });
    };
    const next = (): void => {
      while (lanes.size < IN_FLIGHT && started < first + n) {
        send(started, 1, register(started, 1, null));
        started++;
      }
      if (lanes.size === 0) done();
    };
    sock.on('message', (d) => {
      const text = d.toString('latin1');
      const i = Number(/\r\nCall-ID: rc-(\d+)@bench\r\n/.exec(text)?.[1]);
      const lane = lanes.get(i);
      const cseq = Number(/\r\nCSeq:\s*(\d+) /i.exec(text)?.[1]);
      if (lane === undefined || cseq !== lane.cseq) return; // a late answer to a resend
      const status = Number(text.slice(8, 11));
      if (status === 401 && cseq === 1) {
        const challenge = /\r\nWWW-Authenticate:\s*([^\r\n]+)/i.exec(text)?.[1];
        if (challenge !== undefined) {
          const id = deviceIdOf(i);
          send(i, 2, register(i, 2, buildAuthorization(challenge, { username: id, password: KAMAILIO_PASSWORD, method: 'REGISTER', uri })));
          return;
        }
      }
      if (status !== 200) failed++;
      clearInterval(lane.timer);
      lanes.delete(i);
      next();
    });
    next();
  });
  sock.close();
  return failed;
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  // it exits 0 when it finds no such task, saying so on stdout
  if (r.status !== 0 || /Error/.test(r.stdout + r.stderr)) throw new Error(`callgrind_control ${args.join(' ')} ${pid} failed: ${r.stdout}${r.stderr}`);
}

interface Count {
  readonly instructions: number;
  readonly failed: number;
  readonly files: readonly string[];
  readonly pid: number;
  /** Settled windows: blocks of SETTLE_BLOCK it took, whether the cap was reached first, tier-up/deopt lines in the window. */
  readonly settle?: { readonly blocks: number; readonly settled: boolean; readonly jitLinesInWindow: number };
}

/**
 * Runs `command` under callgrind (forked children counted too, one file per process) and drives it.
 * `window`: W registrations, then only the next M counted (callgrind_control on the one process);
 * `whole`: everything from start to exit counted, `registrations` driven (for a server that forks:
 * callgrind_control cannot reach forked children, they get no vgdb FIFO).
 */
async function measure(
  kind: string,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  port: number | null,
  dir: string,
  mode: { readonly window: true; readonly settle: boolean } | { readonly window: false; readonly registrations: number },
): Promise<Count> {
  const out = join(dir, `callgrind.${kind}`);
  const settle = mode.window && mode.settle;
  // settling: node's --trace-opt lines go through C stdio, fully buffered into a pipe; line-buffered
  // (stdbuf), each arrives when printed, so a block without one is a block without tier-up. One dump file
  // per thread (--separate-threads) for the window's GC/JIT split (callgrind-v8.ts)
  const valgrind = [...(settle ? ['stdbuf', '-oL'] : []), 'valgrind', '--tool=callgrind', `--instr-atstart=${mode.window ? 'no' : 'yes'}`, ...(settle ? ['--separate-threads=yes'] : [])];
  const child: ChildProcess = spawn(valgrind[0] as string, [...valgrind.slice(1), `--callgrind-out-file=${out}.%p`, ...command], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  const pid = child.pid as number;
  // the platform says READY with its port; Kamailio's port is passed in
  const sipPort =
    port ??
    (await new Promise<number>((resolve, reject) => {
      const t = setInterval(() => {
        const m = /READY (\d+)/.exec(output);
        if (m !== null) {
          clearInterval(t);
          resolve(Number(m[1]));
        } else if (gone) {
          clearInterval(t);
          reject(new Error(`${kind} exited before READY:\n${output.slice(-3000)}`));
        }
      }, 200);
    }));
  let failed = 0;
  let settled: Count['settle'];
  const jitLines = (): number => output.match(JIT_LINE)?.length ?? 0;
  try {
    if (mode.window) {
      failed += await drive(sipPort, 0, WARMUP);
      let k = WARMUP;
      if (settle) {
        // a full collection first (the old generation nearly empty, so a mark-compact the start-up's and the
        // warm-up's garbage would bring does not fall in the window by chance); it also drops optimized
        // code, so the JIT settles after it: blocks until SETTLE_QUIET_BLOCKS in a row without a tier-up line
        const done = output.split('GC-DONE').length;
        process.kill(pid, 'SIGUSR2');
        while (output.split('GC-DONE').length === done) {
          if (gone) throw new Error(`${kind} exited in the collection:\n${output.slice(-3000)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        let blocks = 0;
        let quiet = 0;
        while (quiet < SETTLE_QUIET_BLOCKS && blocks < SETTLE_MAX_BLOCKS) {
          const before = jitLines();
          failed += await drive(sipPort, k, SETTLE_BLOCK);
          k += SETTLE_BLOCK;
          blocks++;
          quiet = jitLines() === before ? quiet + 1 : 0;
        }
        settled = { blocks, settled: quiet === SETTLE_QUIET_BLOCKS, jitLinesInWindow: 0 };
      }
      const jitBefore = jitLines();
      control(pid, '-z');
      control(pid, '-i', 'on');
      failed += await drive(sipPort, k, COUNT);
      control(pid, '-i', 'off');
      control(pid, '-d');
      if (settled !== undefined) settled = { ...settled, jitLinesInWindow: jitLines() - jitBefore };
    } else {
      failed += await drive(sipPort, 0, mode.registrations);
    }
  } finally {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // gone
    }
    const killer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }, 60_000);
    await exited;
    clearTimeout(killer);
  }
  // window: the requested dumps are `<out>.<pid>.<n>` (the exit dump `<out>.<pid>` holds what ran after them);
  // whole: the exit dumps of every process
  let instructions = 0;
  const files: string[] = [];
  // (callgrind_control -z can itself leave a small numbered dump: every numbered dump is after the zero, all summed)
  const counted = mode.window ? /^callgrind\..+\.\d+\.\d+(-\d+)?$/ : /^callgrind\..+\.\d+$/;
  for (const f of readdirSync(dir).filter((name) => name.startsWith(`callgrind.${kind}.`) && counted.test(name))) {
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
    instructions += m === null ? 0 : Number(m[1]);
    files.push(join(dir, f));
  }
  // the server's output (with settling: node's tier-up and deopt lines) beside the dumps, for --keep
  writeFileSync(join(dir, `${kind}.${pid}.out`), output);
  return { instructions, failed, files, pid, ...(settled === undefined ? {} : { settle: settled }) };
}

/**
 * How much of the counted window V8 spent in its optimizing compiler and in garbage collection
 * (callgrind_annotate, inclusive counts): a window with much compilation is not yet the steady state
 * (the JIT still warming up), one with a major GC caught a collection the neighbouring windows may not.
 * GC = main-thread collections + concurrent marking (parallel scavenger helpers are left out: a floor).
 */
function shares(files: readonly string[]): { readonly compile: number; readonly gc: number } | null {
  let total = 0;
  let compile = 0;
  let gc = 0;
  for (const f of files) {
    const r = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', f], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
    if (r.status !== 0) return null;
    for (const line of r.stdout.split('\n')) {
      const m = /^\s*([\d,]+) /.exec(line);
      if (m === null) continue;
      const n = Number((m[1] as string).replaceAll(',', ''));
      if (line.includes('PROGRAM TOTALS')) total += n;
      else if (line.includes(':v8::internal::compiler::PipelineCompilationJob::ExecuteJobImpl(')) compile += n;
      else if (line.includes(':v8::internal::Heap::CollectGarbage(') || line.includes(':v8::internal::ConcurrentMarking::RunMajor(')) gc += n;
    }
  }
  return total === 0 ? null : { compile: compile / total, gc: gc / total };
}

/**
 * Kamailio forks its workers, which callgrind_control cannot reach: two whole runs from start to exit,
 * one with W registrations, one with W + M, each process counted (the bench's cfg, 1 UDP worker);
 * the difference over M is the cost of a registration, the start-up and shutdown cancelling out.
 */
async function measureKamailio(dir: string): Promise<Count> {
  const bin = requireBinaryIn(['/usr/sbin', '/usr/local/sbin', '/usr/bin'], 'kamailio', ['kamailio']);
  const run = async (name: string, registrations: number): Promise<Count> => {
    const port = await freePort({ udp: true });
    const args = [
      bin, '-f', join(HERE, 'kamailio', 'kamailio-baseline.cfg'),
      '-DD', '-E', '-m', '512', '-M', '8', '-n', '1', '-x', 'fm',
      '-P', join(dir, `${name}.pid`),
      '-A', `BENCH_LISTEN=udp:127.0.0.1:${port}`,
      '-A', `BENCH_CTL="unix:${join(dir, `${name}_ctl`)}"`,
      '-A', 'WITH_AUTH',
    ];
    // no READY line: the driver's first REGISTER is resent every 2 s until Kamailio's worker answers it
    return measure(name, args, process.env, port, dir, { window: false, registrations });
  };
  const base = await run('kamailio-w', WARMUP);
  const more = await run('kamailio-wm', WARMUP + COUNT);
  return { instructions: more.instructions - base.instructions, failed: base.failed + more.failed, files: [...base.files, ...more.files], pid: more.pid };
}

async function measurePlatform(dir: string, redis: RedisServer | null): Promise<Count> {
  const data = tmpDir('vms-register-callgrind-');
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SERVER_PORT: String(await freePort()),
      SERVER_ADDRESS: '127.0.0.1',
      VMS_GB28181_SIP_HOST: '127.0.0.1',
      VMS_GB28181_SIP_PORT: String(await freePort({ udp: true })),
      VMS_GB28181_SIP_PASSWORD: KAMAILIO_PASSWORD,
      VMS_AUTH_SIGNING_KEY: 'register-callgrind-signing-key-0123456789',
      MYSQL_URL: '',
      REDIS_URL: redis?.url ?? '',
      VMS_DATA_DIR: data.path,
      ...(redis === null ? {} : { VMS_GB28181_SIP_INSTANCE_ID: 'register-callgrind-a' }),
      // the driver's devices never keep alive: held online for the registration's 3,600 s, as Kamailio
      // holds the binding, instead of marked offline 180 s after (a transition per device, not registration work)
      ...(SETTLE ? { VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT: String(SILENT_KEEPALIVES) } : {}),
      ...SHED_BY_QUEUE_ONLY,
      LOG_LEVEL: 'warn',
    };
    const node = [
      process.execPath,
      ...(SETTLE ? ['--expose-gc', '--trace-opt', '--trace-deopt'] : []),
      ...(process.argv.includes('--perf-map') ? ['--perf-basic-prof'] : []),
      ...process.execArgv,
      SELF,
      '--serve',
    ];
    return await measure('platform', node, env, null, dir, { window: true, settle: SETTLE });
  } finally {
    data.remove();
  }
}

/** `--cpu-prof`: no valgrind; the platform under `node --cpu-prof` registers W + M devices, and the top self times print. */
async function profilePlatform(): Promise<void> {
  const data = tmpDir('vms-register-prof-');
  const profDir = mkdtempSync(join(tmpdir(), 'register-prof-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SERVER_PORT: String(await freePort()),
    SERVER_ADDRESS: '127.0.0.1',
    VMS_GB28181_SIP_HOST: '127.0.0.1',
    VMS_GB28181_SIP_PORT: String(await freePort({ udp: true })),
    VMS_GB28181_SIP_PASSWORD: KAMAILIO_PASSWORD,
    VMS_AUTH_SIGNING_KEY: 'register-callgrind-signing-key-0123456789',
    MYSQL_URL: '',
    REDIS_URL: '',
    VMS_DATA_DIR: data.path,
    VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT: String(SILENT_KEEPALIVES),
    ...SHED_BY_QUEUE_ONLY,
    LOG_LEVEL: 'warn',
  };
  const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profDir, ...process.execArgv, SELF, '--serve'], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('READY')) resolve();
    });
  });
  const failed = await drive(Number(env['VMS_GB28181_SIP_PORT']), 0, WARMUP + COUNT);
  child.kill('SIGTERM');
  await exited;
  interface Node { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no .cpuprofile written');
  const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as { nodes: Node[]; samples: number[] };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (const id of prof.samples) {
    const f = byId.get(id)?.callFrame;
    const key = f === undefined ? '?' : `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(services|shared|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  const total = prof.samples.length;
  process.stdout.write(`${WARMUP + COUNT} registrations, ${failed} failed; top self time (${total} samples):\n`);
  for (const [k, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) process.stdout.write(`  ${((100 * n) / total).toFixed(1).padStart(5)} %  ${k}\n`);
  process.stdout.write(`profile: ${join(profDir, file)}\n`);
  data.remove();
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve')) return servePlatform();
  if (process.argv.includes('--cpu-prof')) return profilePlatform();
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind not installed (npm run setup)');
  const keep = process.argv.includes('--keep');
  const withRedis = process.argv.includes('--redis');
  const dir = { path: mkdtempSync(join(tmpdir(), 'register-callgrind-')) }; // not the harness's tmpDir: its reaper would remove --keep's files
  const per = (c: Count): number => c.instructions / COUNT;
  const fmt = (v: number): string => Math.round(v).toLocaleString('en-US');
  try {
    process.stdout.write(`callgrind: ${WARMUP} warm-up registrations, ${COUNT} counted, ${IN_FLIGHT === 1 ? 'one at a time' : `${IN_FLIGHT} in flight`} (REGISTER, 401, REGISTER + digest, 200)${SETTLE ? '' : ', not settled (--no-settle)'}\n`);
    const kam = process.argv.includes('--no-kamailio') ? null : await measureKamailio(dir.path);
    if (kam !== null) process.stdout.write(`kamailio:  ${fmt(per(kam))} instructions per registration${kam.failed > 0 ? `, ${kam.failed} failed` : ''}\n`);
    if (process.argv.includes('--no-project')) return;
    const redis = withRedis ? await startRedis() : null;
    let project: Count;
    try {
      project = await measurePlatform(dir.path, redis);
    } finally {
      await redis?.stop();
    }
    const ratio = kam === null ? NaN : per(project) / per(kam);
    process.stdout.write(
      `project${withRedis ? ' (Redis ownership, redis-server not counted)' : ''}:  ${fmt(per(project))} instructions per registration` +
        `${project.failed > 0 ? `, ${project.failed} failed` : ''}${kam === null ? '' : ` (${ratio.toFixed(2)}× Kamailio)`}\n`,
    );
    const pct = (v: number): string => `${(100 * v).toFixed(1)} %`;
    let splitText = '';
    if (project.settle !== undefined) {
      const v = v8Shares(project.files);
      const s = project.settle;
      const rest = v.total - v.gc - v.jit - v.other;
      process.stdout.write(
        `  JIT: settled after ${s.blocks} × ${SETTLE_BLOCK} registrations past the warm-up and a full collection${s.settled ? '' : ' (NOT settled: the cap was reached)'}; ${s.jitLinesInWindow} tier-up/deopt lines in the window\n` +
          `  of the project's window (${v.threads} threads): GC ${fmt(v.gc / COUNT)} (${pct(v.gc / v.total)}), JIT ${fmt(v.jit / COUNT)} (${pct(v.jit / v.total)}), other threads ${fmt(v.other / COUNT)}, the rest (JavaScript, runtime, builtins, SQLite, libc) ${fmt(rest / COUNT)} per registration\n`,
      );
      splitText = ` (GC ${pct(v.gc / v.total)}, JIT ${pct(v.jit / v.total)}${s.settled ? '' : ', JIT not settled'})`;
    } else {
      const split = shares(project.files);
      if (split !== null) {
        process.stdout.write(`  of the project's window: V8 optimizing compiler ${pct(split.compile)} (JIT still warming up if large), garbage collection ≥ ${pct(split.gc)}\n`);
        splitText = ` (compiler ${pct(split.compile)}, GC ≥ ${pct(split.gc)}, not settled: --no-settle)`;
      }
    }
    printSummary({
      bench: 'register-callgrind',
      what: `instructions per REGISTER + digest registration (${WARMUP.toLocaleString('en-US')} warm-up${SETTLE ? ', a collection and the JIT settled' : ''}, ${COUNT.toLocaleString('en-US')} counted${IN_FLIGHT === 1 ? '' : `, ${IN_FLIGHT} in flight`}${withRedis ? ', Redis ownership' : ''})`,
      figures: `project ${fmt(per(project))}${splitText}${kam === null ? '' : `, Kamailio ${fmt(per(kam))}, ${ratio.toFixed(2)}×`}${kam !== null && kam.failed + project.failed > 0 ? `, ${kam.failed + project.failed} failed` : ''}`,
      target: `≤ ${TARGET_RATIO}× Kamailio's`,
      met: kam === null ? null : ratio <= TARGET_RATIO && kam.failed + project.failed === 0,
    });
    if (keep) process.stdout.write(`callgrind files kept: ${[...(kam?.files ?? []), ...project.files].join(' ')} (callgrind_annotate <file>)\n`);
    if (process.argv.includes('--perf-map')) process.stdout.write(`JIT code map: /tmp/perf-${project.pid}.map\n`);
  } finally {
    if (!keep) rmSync(dir.path, { recursive: true, force: true });
  }
}

await main();
