// A REGISTER storm on one instance (issue 11, targets 1 and 2): N distinct 20-digit devices registering at
// once, as when a shard holding them dies, against one instance run as `npm start` runs it with REDIS_URL
// (ownership on) and default settings (a SIP password set, so every device goes REGISTER → 401 → REGISTER
// with digest → 200). SIPp drives them from test/sipp/storm-device.xml at the highest rate it can (one call
// per device, all at once): a 503 waits its Retry-After and registers again, a transaction that got no
// answer after SIPp's own RFC 3261 retransmissions registers again after 5-30 s, a registered device keeps
// alive every 60 s like a real one (so it stays online however long the storm lasts).
// Beside it, a set of devices registered before the storm keeps alive from its own flow (SEC-1) at a high
// rate: the p99 of their answers and the unanswered ones are the overload figures (target 2: p99 < 500 ms,
// nobody that was online goes offline).
// Printed: time until all N are registered (counted from the product: Redis owner keys naming the instance,
// and the store's online devices through the API), 503s sent (the instance's /metrics) and received
// (SIPp), SIPp failures, registered, lost = N − registered; keepalive p99 / unanswered / offline.
// Run from the repository root: npx tsx test/bench/register-storm.ts [--quick] [--devices N] [--rate R] [--crowd N]
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, requireBinary, runSipp, startRedis, writeInjectionCsv, type RedisServer, type ServiceProcess, type SippRun } from '@vms/harness';
import { ownershipKey } from '@vms/cluster';
import { signToken, udpReceiveQueueBytes } from '@vms/signaling';
import { cpuSeconds } from './kamailio/proc.ts';
import { deviceRows, DOMAIN, percentile, responseTimes, SERVER_ID } from './kamailio/sipp-step.ts';
import { startBenchPlatform } from './bench-platform.ts';
import { isQuick, printSummary } from './summary.ts';
import { watchUdpCrowding } from './crowded-namespace.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const STORM_DEVICE = join(REPO, 'test', 'sipp', 'storm-device.xml');
const PREREGISTER = join(HERE, 'kamailio', 'register_auth_storm.xml');
const KEEPALIVE = join(HERE, 'kamailio', 'keepalive_uac.xml');
const PASSWORD = 'storm-bench-password';
const SIGNING_KEY = 'storm-bench-signing-key-0123456789abcdef';
const INSTANCE_ID = 'storm-bench-a';

const QUICK = isQuick();
const { values: args } = parseArgs({
  options: { quick: { type: 'boolean' }, devices: { type: 'string' }, rate: { type: 'string' }, 'keepalive-devices': { type: 'string' }, crowd: { type: 'string' } },
});
const DEVICES = Number(args.devices ?? (QUICK ? 10_000 : 100_000));
/** SIPp's call rate: above what it can create, so it creates as fast as it can (printed: the rate it reached). */
const RATE = Number(args.rate ?? 20_000);
/** Devices registered before the storm, keeping alive through it from their own flow. */
const KA_DEVICES = Number(args['keepalive-devices'] ?? (QUICK ? 200 : 1000));
/** Their keepalives per second in all: each device every KA_DEVICES / KA_RATE s, well under the 60 s interval. */
const KA_RATE = QUICK ? 100 : 200;
/** Give up on the storm after this long (a device still not registered by then is lost). */
const DEADLINE_MS = (QUICK ? 180 : 900) * 1000;
const TARGET_P99_MS = 500;
/**
 * UDP sockets the bench holds open in the namespace through the run (--crowd N; none by default): a host
 * crowded like one with a media server's RTP ports, past QUEUE_READ_MAX_SOCKETS, where the instance cannot
 * read its receive queue from /proc/net/udp and sheds by its queue's probed delay (queue-probe.ts).
 */
const CROWD = Number(args.crowd ?? 0);

async function crowdNamespace(count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const s = createSocket('udp4');
    await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
    sockets.push(s);
  }
  return sockets;
}

interface Platform {
  readonly server: ServiceProcess;
  readonly sip: string;
  readonly http: string;
  readonly dataDir: string;
}

async function startPlatform(redis: RedisServer): Promise<Platform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vms-storm-bench-'));
  // what `npm start` runs (scripts/start.sh), with REDIS_URL and the settings a storm needs to be one:
  // a SIP password (digest on), an instance id; everything else at its default (log level included)
  const server = await startBenchPlatform({
    name: 'signaling+redis',
    dataDir,
    env: { VMS_GB28181_SIP_PASSWORD: PASSWORD, VMS_GB28181_SIP_INSTANCE_ID: INSTANCE_ID, VMS_AUTH_SIGNING_KEY: SIGNING_KEY, REDIS_URL: redis.url },
    startTimeoutMs: 60_000,
  });
  return { server, sip: `127.0.0.1:${server.env['VMS_GB28181_SIP_PORT']}`, http: `http://127.0.0.1:${server.env['SERVER_PORT']}`, dataDir };
}

/** Devices the store holds online, through the control API (`total` of a one-item page). */
async function onlineInStore(p: Platform, auth: string): Promise<number> {
  const res = await fetch(`${p.http}/vms/devices?online=true&size=1`, { headers: { 'Blade-Auth': auth } });
  const body = (await res.json()) as { data?: { total?: number } };
  return body.data?.total ?? NaN;
}

/** Of `ids`, those whose owner key in Redis names this instance (pipelined GETs, 1,000 at a time). */
async function ownedOf(redis: Redis, ids: readonly string[]): Promise<number> {
  let owned = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const pipe = redis.pipeline();
    for (const id of ids.slice(i, i + 1000)) pipe.get(ownershipKey(id));
    for (const [, v] of (await pipe.exec()) ?? []) if (v === INSTANCE_ID) owned++;
  }
  return owned;
}

/** A counter of the instance's /metrics (sum over the lines whose labels include all of `labels`). */
async function metric(p: Platform, name: string, labels: readonly string[]): Promise<number> {
  const text = await (await fetch(`${p.http}/metrics`)).text();
  let sum = 0;
  for (const l of text.split('\n')) {
    if (!l.startsWith(`${name}{`) || !labels.every((x) => l.includes(x))) continue;
    sum += Number(l.slice(l.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Last row of a SIPp CSV in `dir` whose name matches, as column → number. */
function lastRow(dir: string, match: (f: string) => boolean): Record<string, number> {
  const file = readdirSync(dir).find(match);
  const rows = file === undefined ? [] : readFileSync(join(dir, file), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const head = rows[0]?.split(';') ?? [];
  const last = rows.at(-1)?.split(';') ?? [];
  return Object.fromEntries(head.map((h, i) => [h, Number(last[i])]));
}
const statsOf = (dir: string): Record<string, number> => lastRow(dir, (f) => f.startsWith('stats') && f.endsWith('.csv'));
const countsOf = (dir: string): Record<string, number> => lastRow(dir, (f) => f.endsWith('_counts.csv'));
const sumColumns = (row: Record<string, number>, re: RegExp): number => Object.entries(row).reduce((s, [k, v]) => (re.test(k) && Number.isFinite(v) ? s + v : s), 0);

/** Bytes waiting in the instance's SIP UDP socket (the shedder's own signal, read the same way). */
function receiveQueue(port: number): number {
  return ['/proc/net/udp', '/proc/net/udp6'].reduce((sum, f) => {
    try {
      return sum + (udpReceiveQueueBytes(readFileSync(f, 'latin1'), port) ?? 0);
    } catch {
      return sum;
    }
  }, 0);
}

/** SIPp's error log entries by kind (their first line, numbers blanked), most frequent first. */
function failureKinds(errors: string): string {
  const kinds = new Map<string, number>();
  for (const entry of errors.split(/^\d{4}-\d{2}-\d{2}\t[\d:.]+\t\d+\.\d+: /m).slice(1)) {
    const kind = (entry.split('\n')[0] ?? '').replace(/\d+/g, 'N').slice(0, 120);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, n]) => `${n} × ${k}`).join('; ');
}

// SIPp ends itself after 120 stalls of its loop over 500 ms (its watchdog): on a machine at load 15 it
// did, mid-storm, and its 9,000 registered devices went offline with it
const sippArgs = ['-watchdog_minor_maxtriggers', '1000000', '-watchdog_major_maxtriggers', '1000000', '-auth_uri', `${SERVER_ID}@${DOMAIN}`, '-buff_size', String(8 * 1024 * 1024), '-trace_counts', '-fd', '1', '-max_recv_loops', '10000', '-max_sched_loops', '10000'];
const keys = { gb_server: SERVER_ID, gb_domain: DOMAIN, gb_expires: '3600' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');

async function main(): Promise<void> {
  requireBinary('sip-tester', 'sipp');
  process.stdout.write(`machine: ${cpus().length} cores, load ${load()}; storm of ${DEVICES} devices (SIPp -r ${RATE}), ${KA_DEVICES} registered devices keeping alive at ${KA_RATE}/s beside it\n`);
  const crowd = await crowdNamespace(CROWD);
  if (CROWD > 0) process.stdout.write(`namespace crowded with ${CROWD} more UDP sockets (--crowd): the instance sheds by its queue's probed delay\n`);
  const redisServer = await startRedis();
  const platform = await startPlatform(redisServer);
  const redis = new Redis(redisServer.url, { lazyConnect: false, maxRetriesPerRequest: 3 });
  const auth = `bearer ${await signToken({ tenantId: '000000', userId: 'storm-bench', ttlSec: 7200, role: 'operator' }, SIGNING_KEY, Date.now())}`;
  process.env['SIPP_KEEP_LOGS'] = '1'; // read here, then removed
  const runs: SippRun[] = [];
  try {
    // 1. the devices that are online before the storm, from one flow (SEC-1: their keepalives count only from it)
    const kaRows = deviceRows(1, KA_DEVICES, PASSWORD);
    const kaIds = kaRows.map((r) => r[0] as string);
    const kaFile = writeInjectionCsv(kaRows);
    const kaPort = await freePort({ udp: true });
    for (let pass = 1; (await ownedOf(redis, kaIds)) < KA_DEVICES; pass++) {
      if (pass > 10) throw new Error('the keepalive set did not register in 10 passes');
      const r = await runSipp({ scenario: PREREGISTER, remote: platform.sip, localPort: kaPort, transport: 'u1', calls: KA_DEVICES, rate: 200, injectionFiles: [kaFile], keys, traceMessages: false, timeoutMs: 120_000, extraArgs: sippArgs }).done;
      rmSync(r.dir, { recursive: true, force: true });
    }
    process.stdout.write(`keepalive set: ${KA_DEVICES} registered (load ${load()})\n`);

    // 2. their keepalives, from before the storm until after it
    const kaRun = runSipp({
      scenario: KEEPALIVE, remote: platform.sip, localPort: kaPort, transport: 'u1', calls: KA_RATE * (DEADLINE_MS / 1000 + 120), rate: KA_RATE,
      injectionFiles: [kaFile], keys, traceMessages: false, recvTimeoutMs: 10_000, timeoutMs: DEADLINE_MS + 180_000,
      extraArgs: [...sippArgs, '-trace_rtt', '-rtt_freq', '20'],
    });
    runs.push(kaRun);
    await sleep(3000);

    // 3. the storm
    const stormRows = deviceRows(1_000_000, DEVICES, PASSWORD);
    const stormIds = stormRows.map((r) => r[0] as string);
    const baseKeys = await redis.dbsize();
    const cpu0 = cpuSeconds([platform.server.pid as number]);
    const started = performance.now();
    const storm = runSipp({
      scenario: STORM_DEVICE, remote: platform.sip, localPort: await freePort({ udp: true }), transport: 'u1', calls: DEVICES, rate: RATE, limit: DEVICES,
      injectionFiles: [writeInjectionCsv(stormRows)], keys, traceMessages: false, timeoutMs: DEADLINE_MS + 120_000,
      extraArgs: [...sippArgs, '-d', '60000', '-max_non_invite_retrans', '10', '-pause_msg_ign', '-default_behaviors', 'all,-bye,-abortunexp'],
    });
    runs.push(storm);
    let allMs: number | null = null;
    let createdMs: number | null = null;
    let lastPrint = 0;
    let kaSeen = 0;
    let queueMax = 0;
    const sipPort = Number(platform.server.env['VMS_GB28181_SIP_PORT']);
    const crowding = watchUdpCrowding();
    for (;;) {
      await sleep(1000);
      crowding.check();
      queueMax = Math.max(queueMax, receiveQueue(sipPort));
      const elapsed = performance.now() - started;
      const registered = (await redis.dbsize()) - baseKeys; // owner keys of the storm's devices (the set's were there before)
      const created = statsOf(storm.dir)['TotalCallCreated'] ?? 0;
      if (createdMs === null && created >= DEVICES) createdMs = elapsed;
      if (elapsed - lastPrint >= 10_000) {
        lastPrint = elapsed;
        const shed = await metric(platform, 'vms_sip_responses_total', ['direction="out"', 'method="REGISTER"', 'status="503"']);
        const accepted = await metric(platform, 'vms_sip_registrations_total', ['result="accepted"']);
        const owned = await ownedOf(redis, stormIds);
        const kaWindow = responseTimes(kaRun.dir).slice(kaSeen);
        kaSeen += kaWindow.length;
        process.stdout.write(
          `  ${(elapsed / 1000).toFixed(0).padStart(4)} s  created ${created}  registered ${owned} (200s sent ${accepted})  503 sent ${shed}  ` +
            `SIP receive queue max ${(queueMax / 1024).toFixed(0)} KiB  keepalive p99 ${percentile(kaWindow, 99).toFixed(0)} ms  load ${load()}\n`,
        );
        queueMax = 0;
      }
      if (registered >= DEVICES && (await ownedOf(redis, stormIds)) >= DEVICES) {
        allMs = elapsed;
        break;
      }
      if (elapsed > DEADLINE_MS) break;
    }
    const stormCpu = cpuSeconds([platform.server.pid as number]) - cpu0;
    await sleep(5000); // the keepalives go on a little past the storm
    const kaResult = await kaRun.stop();
    const ka = statsOf(kaResult.dir);
    const kaTimes = responseTimes(kaResult.dir);

    const registered = await ownedOf(redis, stormIds);
    const inStore = await onlineInStore(platform, auth);
    const kaOnline = await ownedOf(redis, kaIds);
    const shedSent = await metric(platform, 'vms_sip_responses_total', ['direction="out"', 'method="REGISTER"', 'status="503"']);
    const stormResult = await storm.stop();
    const st = statsOf(stormResult.dir);
    const counts = countsOf(stormResult.dir);
    const why = failureKinds(stormResult.errors);
    for (const r of [kaResult, stormResult]) rmSync(r.dir, { recursive: true, force: true });

    const lost = DEVICES - registered;
    const shedRecv = sumColumns(counts, /^\d+_503_Recv$/);
    const failedSipp = st['FailedCall(C)'] ?? NaN;
    const kaAnswered = kaTimes.length;
    const kaUnanswered = ka['FailedCall(C)'] ?? NaN;
    const kaP99 = percentile(kaTimes, 99);
    const kaOffline = KA_DEVICES - kaOnline;
    const createRate = createdMs === null ? NaN : DEVICES / (createdMs / 1000);
    const regRate = allMs === null ? NaN : DEVICES / (allMs / 1000);
    process.stdout.write(
      `\nstorm of ${DEVICES} devices, one instance with Redis ownership (load ${load()}):\n` +
        `  SIPp created every device's first REGISTER in ${createdMs === null ? '—' : `${(createdMs / 1000).toFixed(1)} s (${Math.round(createRate)}/s)`}\n` +
        `  all registered after ${allMs === null ? `— (deadline ${DEADLINE_MS / 1000} s)` : `${(allMs / 1000).toFixed(1)} s (${Math.round(regRate)}/s on average)`}\n` +
        `  503 sent ${shedSent} (SIPp received ${shedRecv}); SIPp failed calls ${failedSipp}; retransmissions ${st['Retransmissions(C)'] ?? NaN}\n` +
        (why === '' ? '' : `  SIPp's failure reasons: ${why}\n`) +
        `  registered ${registered} (Redis owner keys naming the instance); online in the store ${inStore}; lost ${lost}\n` +
        `  instance CPU over the storm ${stormCpu.toFixed(1)} s (${allMs === null ? '—' : ((stormCpu * 1e6) / DEVICES).toFixed(0)} µs per registration)\n` +
        `  keepalives of ${KA_DEVICES} registered devices beside it: ${kaAnswered} answered, ${kaUnanswered} unanswered, p50/p99 ${percentile(kaTimes, 50).toFixed(0)}/${kaP99.toFixed(0)} ms; offline after the storm ${kaOffline}\n` +
        (crowding.warning() === null ? '' : `${crowding.warning()}\n`),
    );
    const met = lost === 0 && inStore >= DEVICES + KA_DEVICES && kaOffline === 0 && kaUnanswered === 0 && kaP99 < TARGET_P99_MS;
    printSummary({
      bench: 'register-storm',
      what: `${DEVICES.toLocaleString('en')} devices registering at once (REGISTER + digest, SIPp at ~${Math.round(createRate)}/s) on one instance with Redis ownership, registered devices keeping alive beside it`,
      figures:
        `all registered in ${allMs === null ? '—' : `${(allMs / 1000).toFixed(0)} s`}, lost ${lost}, 503 ${shedSent}, SIPp failed ${failedSipp}; ` +
        `keepalive p99 ${kaP99.toFixed(0)} ms, unanswered ${kaUnanswered}, offline ${kaOffline} (load ${load()})` +
        (CROWD > 0 ? `; namespace crowded with ${CROWD} more UDP sockets` : ''),
      target: `0 lost; keepalive p99 < ${TARGET_P99_MS} ms, none unanswered, none offline`,
      met,
    });
  } finally {
    for (const r of runs) await r.kill().catch(() => undefined);
    redis.disconnect();
    for (const c of crowd) c.close();
    await platform.server.stop();
    rmSync(platform.dataDir, { recursive: true, force: true });
    await redisServer.stop();
  }
}

await main();
