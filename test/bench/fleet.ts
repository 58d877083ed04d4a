// The platform beside Kamailio 5.6, same SIPp scenarios, same run (issue 11): one table of Kamailio /
// this project / ratio for
//   - keepalive MESSAGE: server CPU per keepalive (µs, /proc utime+stime), standalone and with Redis
//     ownership (redis-server's CPU added to the platform's);
//   - REGISTER + digest (401 round trip): server CPU per registration at a fixed rate, fresh device ids;
//   - REGISTER + digest: the highest clean rate over step rates (pass: < 0.1 % failed or unfinished, no
//     timeouts, ≥ 95 % of the offered rate answered; clean: also < 0.1 % retransmissions);
//   - overload (the platform alone): a REGISTER storm at 2× its clean rate with keepalives of registered
//     devices beside it: p99 of the keepalive answers, keepalives lost, 503s the storm got.
// Kamailio: test/bench/kamailio (cfg and scenarios copied from the issue's harness, with provenance).
// Machine shared with other work: CPU from /proc, not wall time, and the ratio within one run is the
// figure to read; the absolute figures move with the load.
// Run from the repository root: npx tsx test/bench/fleet.ts [--quick] [--no-redis]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, requireBinary, startRedis, writeInjectionCsv, type RedisServer, type ServiceProcess } from '@vms/harness';
import { KAMAILIO_PASSWORD, startKamailio } from './kamailio/kamailio.ts';
import { processTree } from './kamailio/proc.ts';
import { deviceRows, sippStep, type StepResult } from './kamailio/sipp-step.ts';
import { startBenchPlatform } from './bench-platform.ts';
import { isQuick, printSummary } from './summary.ts';
import { watchUdpCrowding } from './crowded-namespace.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const KAM = join(HERE, 'kamailio');
const KEEPALIVE = join(KAM, 'keepalive_uac.xml');
const REGISTER = join(KAM, 'register_auth_uac.xml');
const STORM = join(KAM, 'register_auth_storm.xml');

const QUICK = isQuick();
/** Another process's thousands of UDP sockets blind the platform's shedder (crowded-namespace.ts). */
const crowding = watchUdpCrowding();
const WITH_REDIS = !process.argv.includes('--no-redis');
const DEVICES = QUICK ? 2000 : 20_000;
const KA_RATE = QUICK ? 5000 : 10_000;
const KA_SECONDS = QUICK ? 3 : 10;
const REG_RATE = QUICK ? 1000 : 2000;
const REG_SECONDS = QUICK ? 4 : 10;
const STEP_RATES = QUICK ? [1000, 2000, 4000] : [2000, 4000, 5000, 6000, 8000, 10_000, 12_000];
const STEP_SECONDS = QUICK ? 3 : 10;
const TARGET = { registerCpu: 3, registerRate: 0.5, keepalive: 1.5, keepaliveRedis: 2 };

/** Each step registers fresh device ids: a storm is new devices, not refreshes. */
let nextSerial = 1;
function freshIds(count: number): string {
  const inf = writeInjectionCsv(deviceRows(nextSerial, count, KAMAILIO_PASSWORD));
  nextSerial += count;
  return inf;
}

interface Target {
  readonly name: string;
  readonly remote: string;
  readonly serverPids: () => readonly number[];
  readonly sidePids?: () => readonly number[];
}

interface TargetFigures {
  keepalive?: StepResult;
  register?: StepResult;
  steps: StepResult[];
  /** A REGISTER storm at 2× the clean rate, with keepalives of registered devices beside it. */
  storm?: { readonly rate: number; readonly storm: StepResult; readonly keepalive: StepResult };
}

const line = (t: string, s: StepResult): string =>
  `  ${t.padEnd(15)} ${String(s.rate).padStart(6)}/s  ok ${String(s.ok).padStart(6)}/${s.calls}  failed ${s.failed} unfinished ${s.unfinished} retrans ${s.retrans} ` +
  `answered ${Math.round(s.achieved)}/s  p50/p99 ${s.p50Ms.toFixed(0)}/${s.p99Ms.toFixed(0)} ms  CPU ${s.cpuUs.toFixed(1)} µs${s.sideCpuUs > 0 ? ` + redis ${s.sideCpuUs.toFixed(1)} µs` : ''}` +
  `  ${s.clean ? 'clean' : s.pass ? 'pass' : 'FAIL'}\n`;

async function measure(t: Target, preregister: boolean, stepRates: readonly number[], storm = false): Promise<TargetFigures> {
  const out: TargetFigures = { steps: [] };
  const devicePort = await freePort({ udp: true });
  const devices = freshIds(DEVICES);
  const base = { remote: t.remote, serverPids: t.serverPids, ...(t.sidePids === undefined ? {} : { sidePids: t.sidePids }) };
  if (preregister) {
    // SEC-1: keepalives count only from the flow the device registered from: same local port. A device
    // shed with 503 registers in the next pass (a refresh of a registered one is never shed).
    for (let pass = 1; ; pass++) {
      const r = await sippStep({ ...base, scenario: STORM, localPort: devicePort, rate: 300, calls: DEVICES, injectionFile: devices, recvTimeoutMs: 10_000 });
      process.stdout.write(line(`${t.name} prereg ${pass}`, r) + `    503 answers: ${r.shed}\n`);
      if (r.ok - r.shed >= DEVICES) break;
      if (pass === 10) throw new Error(`${t.name}: devices still not all registered after 10 passes`);
    }
  }
  await sippStep({ ...base, scenario: KEEPALIVE, localPort: devicePort, rate: 2000, calls: 2000, injectionFile: devices }); // warm-up (JIT)
  out.keepalive = await sippStep({ ...base, scenario: KEEPALIVE, localPort: devicePort, rate: KA_RATE, calls: KA_RATE * KA_SECONDS, injectionFile: devices });
  process.stdout.write(line(`${t.name} keepalive`, out.keepalive));
  crowding.check();
  out.register = await sippStep({ ...base, scenario: REGISTER, localPort: await freePort({ udp: true }), rate: REG_RATE, calls: REG_RATE * REG_SECONDS, injectionFile: freshIds(REG_RATE * REG_SECONDS) });
  process.stdout.write(line(`${t.name} register`, out.register));
  for (const rate of stepRates) {
    const calls = rate * STEP_SECONDS;
    const s = await sippStep({ ...base, scenario: REGISTER, localPort: await freePort({ udp: true }), rate, calls, injectionFile: freshIds(calls) });
    crowding.check();
    process.stdout.write(line(`${t.name} step`, s));
    out.steps.push(s);
    if (!s.clean) break;
    await new Promise((r) => setTimeout(r, 1000)); // let retransmission timers and GC settle
  }
  if (storm) {
    // overload: twice the highest clean rate (at least the lowest step) of new devices, while the
    // registered ones keep alive at a modest rate from their flow; their p99 is the figure (< 500 ms)
    const rate = 2 * Math.max(STEP_RATES[0] ?? 1000, ...out.steps.filter((x) => x.clean).map((x) => x.rate));
    const calls = rate * STEP_SECONDS;
    const kaRate = 500;
    const ka = sippStep({ ...base, scenario: KEEPALIVE, localPort: devicePort, rate: kaRate, calls: kaRate * (STEP_SECONDS + 4), injectionFile: devices, recvTimeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 2000));
    const st = await sippStep({ ...base, scenario: STORM, localPort: await freePort({ udp: true }), rate, calls, injectionFile: freshIds(calls) });
    crowding.check();
    out.storm = { rate, storm: st, keepalive: await ka };
    process.stdout.write(line(`${t.name} storm`, st) + `    503 answers: ${st.shed}\n` + line(`${t.name} storm ka`, out.storm.keepalive));
  }
  return out;
}

async function startPlatform(dataDir: string, redis: RedisServer | null): Promise<ServiceProcess> {
  return startBenchPlatform({
    name: redis === null ? 'signaling' : 'signaling+redis',
    dataDir,
    env: {
      VMS_GB28181_SIP_PASSWORD: KAMAILIO_PASSWORD,
      VMS_AUTH_SIGNING_KEY: 'fleet-bench-signing-key-0123456789abcdef',
      REDIS_URL: redis?.url ?? '',
      VMS_GB28181_SIP_INSTANCE_ID: redis === null ? undefined : 'fleet-bench-a',
      LOG_LEVEL: 'warn',
    },
  });
}

async function measurePlatform(name: string, redis: RedisServer | null, stepRates: readonly number[], storm = false): Promise<TargetFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vms-fleet-bench-'));
  const server = await startPlatform(dataDir, redis);
  try {
    const pid = server.pid as number;
    const redisPid = redis === null ? undefined : redisServerPid(redis);
    return await measure(
      {
        name,
        remote: `127.0.0.1:${server.env['VMS_GB28181_SIP_PORT']}`,
        serverPids: () => [pid],
        ...(redisPid === undefined ? {} : { sidePids: () => [redisPid] }),
      },
      true,
      stepRates,
      storm,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The redis-server listening on the harness's port (its pid is not exported by the harness). */
function redisServerPid(redis: RedisServer): number | undefined {
  return processTree(process.pid).find((p) => {
    try {
      return readCmdline(p).includes('redis-server') && readCmdline(p).includes(String(redis.port));
    } catch {
      return false;
    }
  });
}
const readCmdline = (pid: number): string => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');

const bestClean = (steps: readonly StepResult[]): number => steps.filter((s) => s.clean).reduce((m, s) => Math.max(m, s.rate), 0);
const ratio = (a: number, b: number): string => (Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—');

async function main(): Promise<void> {
  requireBinary('sip-tester', 'sipp');
  process.stdout.write(`machine: ${cpus().length} cores; ${DEVICES} devices, keepalive ${KA_RATE}/s × ${KA_SECONDS} s, register ${REG_RATE}/s × ${REG_SECONDS} s, steps ${STEP_RATES.join(', ')}/s × ${STEP_SECONDS} s\n`);

  const kam = await startKamailio({ auth: true });
  let k: TargetFigures;
  try {
    k = await measure({ name: 'kamailio', remote: `127.0.0.1:${kam.port}`, serverPids: () => kam.pids() }, false, STEP_RATES);
  } finally {
    await kam.stop();
  }
  const p = await measurePlatform('project', null, STEP_RATES, true);
  let pr: TargetFigures | null = null;
  if (WITH_REDIS) {
    const redis = await startRedis();
    try {
      pr = await measurePlatform('project+redis', redis, QUICK ? [] : STEP_RATES);
    } finally {
      await redis.stop();
    }
  }

  const kKa = k.keepalive?.cpuUs ?? NaN;
  const pKa = p.keepalive?.cpuUs ?? NaN;
  const prKa = (pr?.keepalive?.cpuUs ?? NaN) + (pr?.keepalive?.sideCpuUs ?? NaN);
  const kReg = k.register?.cpuUs ?? NaN;
  const pReg = p.register?.cpuUs ?? NaN;
  const prReg = (pr?.register?.cpuUs ?? NaN) + (pr?.register?.sideCpuUs ?? NaN);
  const kRate = bestClean(k.steps);
  const pRate = bestClean(p.steps);
  const kReached = k.steps.length > 0 && k.steps.every((s) => s.clean) ? ` (≥, top step ${STEP_RATES.at(-1)}/s clean)` : '';
  const rows: [string, string, string, string][] = [
    [`keepalive CPU per call, ${KA_RATE}/s`, `${kKa.toFixed(1)} µs`, `${pKa.toFixed(1)} µs standalone`, ratio(pKa, kKa)],
    ...(pr === null ? [] : ([[`keepalive CPU per call, Redis ownership`, `${kKa.toFixed(1)} µs`, `${(pr.keepalive?.cpuUs ?? NaN).toFixed(1)} + redis ${(pr.keepalive?.sideCpuUs ?? NaN).toFixed(1)} µs`, ratio(prKa, kKa)]] as [string, string, string, string][])),
    [`REGISTER + digest CPU per registration, ${REG_RATE}/s`, `${kReg.toFixed(1)} µs`, `${pReg.toFixed(1)} µs standalone`, ratio(pReg, kReg)],
    ...(pr === null ? [] : ([[`REGISTER + digest CPU, Redis ownership`, `${kReg.toFixed(1)} µs`, `${(pr.register?.cpuUs ?? NaN).toFixed(1)} + redis ${(pr.register?.sideCpuUs ?? NaN).toFixed(1)} µs`, ratio(prReg, kReg)]] as [string, string, string, string][])),
    [`REGISTER + digest highest clean rate`, `${kRate}/s${kReached}`, `${pRate}/s`, ratio(pRate, kRate)],
  ];
  const st = p.storm;
  if (st !== undefined) {
    const registered = st.storm.ok - st.storm.shed;
    rows.push([
      `storm at ${st.rate}/s (2× clean): keepalive p99 / lost`,
      '—',
      `p99 ${st.keepalive.p99Ms.toFixed(0)} ms, ${st.keepalive.failed + st.keepalive.unfinished} of ${st.keepalive.calls} lost; storm: ${registered} registered, ${st.storm.shed} got 503, ${st.storm.failed + st.storm.unfinished} failed`,
      '—',
    ]);
  }
  process.stdout.write(`\n| work | Kamailio | this project | ratio |\n|---|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  process.stdout.write(
    'CPU: utime+stime from /proc per answered call (Kamailio: main process and its workers; the project: its node process; + redis-server for the Redis rows).\n' +
      (kReached === '' ? '' : 'Kamailio passed every step: its ceiling is above the top step, so the rate ratio is an upper bound.\n'),
  );
  const crowded = crowding.warning();
  if (crowded !== null) process.stdout.write(`${crowded}\n`);
  const stormOk = st === undefined || (st.keepalive.p99Ms < 500 && st.keepalive.failed + st.keepalive.unfinished === 0);
  const met =
    crowded === null &&
    stormOk &&
    pReg / kReg <= TARGET.registerCpu && pRate / kRate >= TARGET.registerRate && pKa / kKa <= TARGET.keepalive && (pr === null || prKa / kKa <= TARGET.keepaliveRedis);
  printSummary({
    bench: 'fleet',
    what: 'SIPp against Kamailio 5.6 and the project, same run: keepalive and REGISTER+digest CPU, clean REGISTER rate',
    figures:
      `keepalive ${pKa.toFixed(1)}/${kKa.toFixed(1)} µs ${ratio(pKa, kKa)}` +
      (pr === null ? '' : `, +Redis ${prKa.toFixed(1)} µs ${ratio(prKa, kKa)}`) +
      `; register ${pReg.toFixed(0)}/${kReg.toFixed(0)} µs ${ratio(pReg, kReg)}; clean rate ${pRate}/${kRate}/s ${ratio(pRate, kRate)}` +
      (st === undefined ? '' : `; storm ${st.rate}/s: keepalive p99 ${st.keepalive.p99Ms.toFixed(0)} ms, ${st.storm.shed} shed`) +
      (crowded === null ? '' : '; NOT VALID: UDP namespace crowded by other processes'),
    target: `register CPU ≤ ${TARGET.registerCpu}×, rate ≥ ${TARGET.registerRate}×, keepalive ≤ ${TARGET.keepalive}× (${TARGET.keepaliveRedis}× with Redis), storm keepalive p99 < 500 ms`,
    met,
  });
}

await main();
