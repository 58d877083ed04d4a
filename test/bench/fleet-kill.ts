// A fleet on this machine, one shard killed (issue 11, target 5): three signaling instances with Redis
// ownership and one MariaDB (the node table and the device store they share), the SIP edge in front of them
// (services/sip-edge as deployed: one address for every device, placement by rendezvous hash over the shards
// the node table has online), and N SIPp devices (default 300,000) registered through the edge and keeping
// alive at the real rate: one keepalive per device per 60 s (GB/T 28181-2016 §9.6.1's default), so
// N / 60 keepalives a second in all. Then kill -9 of one shard: the node table drops it after the online
// window (3 heartbeats of 5 s, SPEC NODE-1), the edge reads the table within its 1 s poll and places that
// shard's devices on the other two; each moved device's next keepalive (or the retransmission of one in
// flight) reaches its new shard, which answers 404 (no registration of it there), and the device registers
// there at once (REGISTER → 401 → REGISTER with digest → 200; 503 waits its Retry-After). A real fleet does
// the same: nothing tells the device its shard died, its next keepalive finds out.
//
// Devices: test/sipp/storm-device.xml, several SIPp processes, each with a slice of the ids, its own loopback
// address (127.0.2.k) and one UDP socket per device (`-t un`): every device has its own flow (address and
// port), as cameras do. A slice is bounded by the open-file limit (one socket per device) and by the
// ephemeral port range of one address; both are checked before anything starts.
// Counted from the product, not from SIPp: a device is online on a shard when its Redis owner key (OWN-1)
// names that shard and the shared store has it online (gb_device.online).
// Printed: time from the kill until every device of the killed shard is owned by a survivor (and online in
// the store), devices lost (not back by the deadline), devices of the surviving shards that went offline or
// changed owner meanwhile (should be 0), SIPp failed calls; per process (each shard, the edge,
// redis-server, mariadbd, the SIPp devices, this bench) CPU seconds and % of one core over the settle
// window and over the recovery, RSS at settle and after recovery; one table at the end.
// Run from the repository root: npx tsx test/bench/fleet-kill.ts [--quick] [--devices N] [--rate R]
//   [--per-sipp K] [--settle S] [--deadline S] [--shared-socket] [--sipp-nice N]
import { closeSync, fstatSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { cpus, freemem, getPriority, loadavg, setPriority, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createMysqlPool, ownershipKey } from '@vms/cluster';
import { freePort, requireBinary, runSipp, startMariaDb, startRedis, startService, tsxArgs, writeInjectionCsv, type ServiceProcess, type SippResult, type SippRun } from '@vms/harness';
import { Redis } from 'ioredis';
import type { RowDataPacket } from 'mysql2/promise';
import { startInstance, waitForOnline, type Instance, type Stores } from '../integration/routing-cluster.ts';
import { cpuSeconds, processTree, rssKiB } from './kamailio/proc.ts';
import { deviceRows, DOMAIN, SERVER_ID } from './kamailio/sipp-step.ts';
import { isQuick, printSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const DEVICE_SCENARIO = join(REPO, 'test', 'sipp', 'storm-device.xml');
const EDGE_MAIN = join(REPO, 'services', 'sip-edge', 'src', 'main.ts');
const PASSWORD = 'fleet-kill-password';
const CODES = ['shard-a', 'shard-b', 'shard-c'] as const;
const KILLED = 'shard-b';
const SURVIVORS: readonly string[] = CODES.filter((c) => c !== KILLED);
/** The devices' keepalive period (SIPp -d): the GB/T 28181 default, what a fleet sends. */
const KEEPALIVE_MS = 60_000;
/** Registration lifetime the devices ask for (storm-device.xml: Expires 3600; they do not refresh it). */
const EXPIRES_S = 3600;

const QUICK = isQuick();
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    devices: { type: 'string' },
    rate: { type: 'string' },
    'per-sipp': { type: 'string' },
    settle: { type: 'string' },
    deadline: { type: 'string' },
    'shared-socket': { type: 'boolean' },
    'sipp-nice': { type: 'string' },
  },
});
const DEVICES = Number(args.devices ?? (QUICK ? 5000 : 300_000));
/** First registrations a second over all SIPp processes (paced: the fleet coming up, not a storm). */
const RATE = Number(args.rate ?? (QUICK ? 200 : 500));
/**
 * Devices per SIPp process: with one socket per device, under the open-file limit and one address's port
 * range; with `--shared-socket`, 50,000 (fewer, busier simulator processes: each wakes for more datagrams at
 * a time, so the simulator takes less of the 2 cores the platform is measured on).
 */
const PER_SIPP = Number(args['per-sipp'] ?? (QUICK ? 2000 : args['shared-socket'] === true ? 50_000 : 18_000));
/** Seconds of steady keepalives after the last registration, before the kill (the settle CPU window). */
const SETTLE_S = Number(args.settle ?? (QUICK ? 60 : 120));
/** Seconds after the kill by which a device of the killed shard not back is lost. */
const DEADLINE_S = Number(args.deadline ?? (QUICK ? 180 : 1200));
/** Seconds of steady state measured once all are back. */
const AFTER_S = QUICK ? 20 : 60;
/** Registration phase bound: the paced time, then room for 503s and retries. */
const REGISTER_DEADLINE_S = Math.ceil(DEVICES / RATE) + (QUICK ? 120 : 900);
const POLL_MS = QUICK ? 1000 : 2000;
/** Seconds without one more device registered after which the registration phase is given up. */
const STALL_S = QUICK ? 60 : 180;
const SIPP_COUNT = Math.ceil(DEVICES / PER_SIPP);
/**
 * `--shared-socket`: each SIPp process sends for all its devices from one UDP socket (`-t u1`), so a device's
 * flow is its process's address and port, shared by its slice. The platform's work per device is the same
 * (each device registers with its own digest and keeps alive with its own id; SEC-1 binds the id to the flow
 * it registered from), and the host then holds as many UDP sockets as a platform host in the field, where the
 * devices are elsewhere: one socket per device puts 300,000 sockets in this kernel and their polling in
 * SIPp, which on 2 cores is the simulator's cost, not the platform's.
 */
const SHARED_SOCKET = args['shared-socket'] === true;
/**
 * Niceness of the SIPp processes above the platform's (`--sipp-nice`, default 10): in a deployment the
 * devices are not on the platform's host, and here 300,000 of them took half a core in steady state and
 * more in the storm, beside the 2 cores' platform processes. Below the platform's priority they take what
 * it leaves; a starved simulator only makes its own keepalives late (seen as devices offline: a failure,
 * never a pass it did not earn). 0: the same priority as the platform.
 */
const SIPP_NICE = Number(args['sipp-nice'] ?? 10);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');
const utc = (): string => new Date().toISOString().slice(0, 19) + 'Z';
const out = (s: string): void => void process.stdout.write(`${s}\n`);
const mb = (kib: number): string => `${(kib / 1024).toFixed(0)} MB`;

/** What one SIPp process can hold (one socket per device), checked before anything starts. */
function checkLimits(): void {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const files = /^Max open files\s+(\d+)\s+(\d+|unlimited)/m.exec(limits);
  const hard = files?.[2] === 'unlimited' ? Infinity : Number(files?.[2] ?? 1024);
  const [low = 32768, high = 60999] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const problems: string[] = [];
  if (!SHARED_SOCKET && PER_SIPP + 200 > hard) problems.push(`--per-sipp ${PER_SIPP}: one socket per device, the open-file hard limit is ${hard} (ulimit -Hn)`);
  if (!SHARED_SOCKET && PER_SIPP > (high - low) * 0.9) problems.push(`--per-sipp ${PER_SIPP}: one address's ephemeral ports are ${low}-${high} (net.ipv4.ip_local_port_range)`);
  if (SIPP_COUNT > 250) problems.push(`${SIPP_COUNT} SIPp processes: one loopback address each (127.0.2.1-250)`);
  if (!Number.isFinite(DEVICES) || DEVICES < 3 || !Number.isFinite(RATE) || RATE <= 0) problems.push('--devices ≥ 3 and --rate > 0 expected');
  // devices never refresh their registration: everything measured must happen within its lifetime
  const span = DEVICES / RATE + SETTLE_S + DEADLINE_S + AFTER_S;
  if (span > EXPIRES_S * 0.95) problems.push(`registration ${Math.round(DEVICES / RATE)} s + settle + deadline + after = ${Math.round(span)} s: over the devices' ${EXPIRES_S} s registration (lower --deadline or raise --rate)`);
  if (problems.length > 0) throw new Error(`fleet-kill: ${problems.join('; ')}`);
}

/**
 * Connection tracking, if the kernel does it on loopback: one entry per device flow (2 minutes after its
 * last reply), so a table smaller than the fleet drops new flows' packets ("table full"). Printed at settle.
 */
function conntrack(): string {
  const read = (f: string): number => {
    try {
      return Number(readFileSync(`/proc/sys/net/netfilter/${f}`, 'utf8').trim());
    } catch {
      return NaN;
    }
  };
  const count = read('nf_conntrack_count');
  const max = read('nf_conntrack_max');
  if (!Number.isFinite(count)) return 'no conntrack';
  return `conntrack ${count} of ${max} entries${count > 0 && max < DEVICES * 1.2 ? ' (WARNING: fewer than the fleet needs: sysctl net.netfilter.nf_conntrack_max)' : ''}`;
}

/** The pid of the harness's server listening on `port` (the harness does not export it). */
function pidListening(binary: string, port: number): number | undefined {
  return processTree(process.pid).find((p) => {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ');
      return cmd.includes(binary) && cmd.includes(String(port));
    } catch {
      return false;
    }
  });
}

interface Proc {
  readonly name: string;
  readonly pids: () => readonly number[];
}
interface Sample {
  readonly at: number;
  readonly cpu: ReadonlyMap<string, number>;
  readonly rss: ReadonlyMap<string, number>;
}
function sample(procs: readonly Proc[]): Sample {
  return {
    at: performance.now(),
    cpu: new Map(procs.map((p) => [p.name, cpuSeconds(p.pids())])),
    rss: new Map(procs.map((p) => [p.name, rssKiB(p.pids())])),
  };
}
/** CPU seconds between two samples and the share of one core it is. */
function cpuOver(a: Sample, b: Sample, name: string): { s: number; pct: number } {
  const s = (b.cpu.get(name) ?? 0) - (a.cpu.get(name) ?? 0);
  return { s, pct: (100 * s) / ((b.at - a.at) / 1000) };
}

/** A counter of a /metrics text (sum over the lines whose labels include all of `labels`). */
async function metric(url: string, name: string, labels: readonly string[] = []): Promise<number> {
  try {
    const text = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
    let sum = 0;
    for (const l of text.split('\n')) {
      if (!(l.startsWith(`${name}{`) || l.startsWith(`${name} `)) || !labels.every((x) => l.includes(x))) continue;
      sum += Number(l.slice(l.lastIndexOf(' ') + 1));
    }
    return sum;
  } catch {
    return NaN; // the killed shard
  }
}

/**
 * Last row of a SIPp -trace_stat CSV as column → number (readable while SIPp runs: -fd). Only its head and
 * tail are read: a full run's file grows by a row every 5 s for an hour, in 17 SIPp processes.
 */
function sippStats(dir: string): Record<string, number> {
  let fd: number | undefined;
  try {
    fd = openSync(join(dir, 'stats.csv'), 'r');
    const size = fstatSync(fd).size;
    const chunk = (at: number, len: number): string => {
      const buf = Buffer.alloc(len);
      return buf.subarray(0, readSync(fd as number, buf, 0, len, at)).toString('latin1');
    };
    const head = (chunk(0, 16_384).split('\n')[0] ?? '').split(';');
    const last = (chunk(Math.max(0, size - 16_384), 16_384).split('\n').filter((l) => l.trim() !== '').at(-1) ?? '').split(';');
    return Object.fromEntries(head.map((h, i) => [h, Number(last[i])]));
  } catch {
    return {};
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** SIPp's error log entries by kind (first line, numbers blanked), most frequent first. */
function failureKinds(results: readonly SippResult[]): string {
  const kinds = new Map<string, number>();
  for (const r of results) {
    for (const entry of r.errors.split(/^\d{4}-\d{2}-\d{2}\t[\d:.]+\t\d+\.\d+: /m).slice(1)) {
      const kind = (entry.split('\n')[0] ?? '').replace(/\d+/g, 'N').slice(0, 120);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
  }
  return [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, n]) => `${n} × ${k}`).join('; ');
}

/** pino lines at warn or above in `output`, counted by message, most frequent first, each with the error of its first occurrence. */
function warnings(output: string): string {
  const kinds = new Map<string, { n: number; err: string }>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const rec = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((rec.level ?? 0) < 40) continue;
      const kind = kinds.get(String(rec.msg)) ?? { n: 0, err: String(rec.err?.message ?? '').slice(0, 160) };
      kind.n++;
      kinds.set(String(rec.msg), kind);
    } catch {
      // a line cut by the output limit
    }
  }
  return [...kinds]
    .sort((a, b) => b[1].n - a[1].n)
    .slice(0, 6)
    .map(([k, { n, err }]) => `${n} × ${k}${err === '' ? '' : ` (first: ${err})`}`)
    .join('; ');
}

async function main(): Promise<void> {
  requireBinary('sip-tester', 'sipp');
  checkLimits();
  out(
    `fleet-kill ${QUICK ? 'quick' : 'full'} at ${utc()}: machine ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB (${(freemem() / 2 ** 30).toFixed(1)} free), load ${load()}\n` +
      `  ${DEVICES} devices in ${SIPP_COUNT} SIPp processes (≤ ${PER_SIPP} each, ${SHARED_SOCKET ? 'one socket per SIPp process' : 'one socket per device'}), registering at ${RATE}/s through the edge, ` +
      `SIPp at nice +${SIPP_NICE} over the platform; keepalive every ${KEEPALIVE_MS / 1000} s (${Math.round(DEVICES / (KEEPALIVE_MS / 1000))}/s in all); settle ${SETTLE_S} s; kill -9 ${KILLED}; deadline ${DEADLINE_S} s`,
  );
  const t0 = performance.now();
  const phase = (): string => `${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s`;

  // the stores: MariaDB with room for the fleet's rows (the harness's 16 MB pool is sized for tests)
  const [redisServer, db] = await Promise.all([
    startRedis(),
    startMariaDb({ args: ['--innodb-buffer-pool-size=512M', '--innodb-log-file-size=256M', '--max-connections=500'], startTimeoutMs: 120_000 }),
  ]);
  const mysqlUrl = await db.createDatabase('vms');
  const pool = createMysqlPool(mysqlUrl, { connectionLimit: 2 });
  const redis = new Redis({ host: redisServer.host, port: redisServer.port, maxRetriesPerRequest: 3, lazyConnect: false });
  const stores: Stores = {
    redis: redisServer,
    db,
    mysqlUrl,
    pool,
    redisClient: redis,
    async stop() {
      redis.disconnect();
      await pool.end().catch(() => undefined);
      await Promise.all([redisServer.stop(), db.stop()]);
    },
  };
  const shards = new Map<string, Instance>();
  let edge: ServiceProcess | null = null;
  const sipps: SippRun[] = [];
  try {
    // three shards as the cluster runs them (SPEC §12 settings, defaults for every timing), the edge's
    // address trusted to name device flows (SEC-3: the unbound-message bound per device flow, not per edge)
    for (const code of CODES) {
      shards.set(code, await startInstance(stores, code, { env: { VMS_GB28181_SIP_PASSWORD: PASSWORD, VMS_LIMITS_EDGE_ADDRESSES: '127.0.0.1', LOG_LEVEL: 'info' } }));
    }
    await waitForOnline(shards.get('shard-a')!, [...CODES], 60_000);
    const edgePort = await freePort({ udp: true });
    const edgeMetricsPort = await freePort();
    edge = await startService({
      name: 'sip-edge',
      cwd: REPO,
      args: tsxArgs(EDGE_MAIN),
      env: {
        VMS_EDGE_HOST: '127.0.0.1',
        VMS_EDGE_BIND_HOST: '127.0.0.1',
        VMS_EDGE_PORT: String(edgePort),
        VMS_EDGE_CODE: 'edge-1',
        VMS_EDGE_FLOW_SECRET: 'fleet-kill-flow-secret-0123456789',
        MYSQL_URL: mysqlUrl,
        VMS_EDGE_METRICS_HOST: '127.0.0.1',
        VMS_EDGE_METRICS_PORT: String(edgeMetricsPort),
        // each SIPp process is one address with thousands of devices behind it (a large NAT'd site, the
        // case the edge's README names for raising it); the global ceiling stays at its default
        VMS_EDGE_PER_ADDRESS_REQUESTS_PER_SEC: '1000000',
        // every device's flow remembered (default 100,000): a REGISTER from a remembered flow is a
        // refresh, never shed by the edge's overload control (README, Overload)
        VMS_EDGE_MAX_FLOW_DEVICES: String(Math.max(100_000, DEVICES)),
        LOG_LEVEL: 'info',
      },
      healthUrl: `http://127.0.0.1:${edgeMetricsPort}/metrics`,
      startTimeoutMs: 60_000,
    });
    const edgeMetrics = `http://127.0.0.1:${edgeMetricsPort}/metrics`;
    const edgeProc = edge;
    const redisPid = pidListening('redis-server', redisServer.port);
    const dbPid = pidListening('mariadbd', db.port);
    const procs: Proc[] = [
      ...CODES.map((code): Proc => ({ name: code, pids: () => [shards.get(code)!.proc.pid as number] })),
      { name: 'sip-edge', pids: () => [edgeProc.pid as number] },
      { name: 'redis-server', pids: () => (redisPid === undefined ? [] : [redisPid]) },
      { name: 'mariadbd', pids: () => (dbPid === undefined ? [] : [dbPid]) },
      { name: `SIPp ×${SIPP_COUNT}`, pids: () => sipps.map((s) => s.pid as number) },
      { name: 'this bench', pids: () => [process.pid] },
    ];
    out(`${phase()}  stores, 3 shards and the edge up (load ${load()})`);

    // the devices: one SIPp per slice, each on its own loopback address, one socket per device
    const rows = deviceRows(1, DEVICES, PASSWORD);
    const ids = rows.map((r) => r[0] as string);
    const perRate = RATE / SIPP_COUNT;
    for (let k = 0; k < SIPP_COUNT; k++) {
      const slice = rows.slice(k * PER_SIPP, (k + 1) * PER_SIPP);
      sipps.push(
        runSipp({
          scenario: DEVICE_SCENARIO,
          remote: `127.0.0.1:${edgePort}`,
          localIp: `127.0.2.${k + 1}`,
          localPort: await freePort({ udp: true }),
          transport: SHARED_SOCKET ? 'u1' : 'un',
          calls: slice.length,
          rate: perRate,
          limit: slice.length,
          injectionFiles: [writeInjectionCsv(slice)],
          keys: { gb_server: SERVER_ID, gb_domain: DOMAIN },
          traceMessages: false,
          timeoutMs: (REGISTER_DEADLINE_S + SETTLE_S + DEADLINE_S + AFTER_S + 600) * 1000,
          extraArgs: [
            // SIPp ends itself after 120 stalls of its loop over 500 ms (its watchdog); a loaded machine has them
            '-watchdog_minor_maxtriggers', '1000000', '-watchdog_major_maxtriggers', '1000000',
            '-auth_uri', `${SERVER_ID}@${DOMAIN}`,
            '-d', String(KEEPALIVE_MS),
            '-max_non_invite_retrans', '10',
            ...(SHARED_SOCKET ? [] : ['-max_socket', String(slice.length + 100)]),
            '-pause_msg_ign', '-default_behaviors', 'all,-bye,-abortunexp',
            '-fd', '5',
            // its error log (a line per retransmission timeout: many in a storm) rotates at 20 MB
            '-max_log_size', '20000000',
          ],
        }),
      );
    }

    for (const s of sipps) if (s.pid !== undefined && SIPP_NICE !== 0) setPriority(s.pid, Math.min(19, getPriority() + SIPP_NICE));

    /** Owner of each id (Redis OWN-1 keys), 10,000 per MGET. */
    const owners = async (list: readonly string[]): Promise<(string | null)[]> => {
      const res: (string | null)[] = [];
      for (let i = 0; i < list.length; i += 10_000) res.push(...(await redis.mget(...list.slice(i, i + 10_000).map((id) => ownershipKey(id)))));
      return res;
    };
    /** How many of `list` have an owner key (EXISTS counts them in Redis), 10,000 per command. */
    const ownedCount = async (list: readonly string[]): Promise<number> => {
      let n = 0;
      for (let i = 0; i < list.length; i += 10_000) n += await redis.exists(...list.slice(i, i + 10_000).map((id) => ownershipKey(id)));
      return n;
    };
    const tally = (o: readonly (string | null)[]): Map<string, number> => {
      const m = new Map<string, number>();
      for (const x of o) m.set(String(x), (m.get(String(x)) ?? 0) + 1);
      return m;
    };
    const offlineInStore = async (): Promise<Set<string>> => {
      const [r] = await pool.query<RowDataPacket[]>('SELECT device_id FROM gb_device WHERE online = 0');
      return new Set(r.map((x) => String(x.device_id)));
    };
    const onlineInStore = async (): Promise<number> => {
      const [r] = await pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM gb_device WHERE online = 1');
      return Number(r[0]?.n ?? NaN);
    };
    /** What the edge sees: shards it may place on, and requests it refused for want of one (503). */
    const edgeView = async (): Promise<string> =>
      `edge: ${await metric(edgeMetrics, 'vms_edge_shards', ['state="eligible"'])} shards eligible, ${await metric(edgeMetrics, 'vms_edge_refused_total', ['reason="no_shard"'])} refused for no shard, ${await metric(edgeMetrics, 'vms_edge_shed_total')} shed`;
    const failedCalls = (): number => sipps.reduce((s, r) => s + (sippStats(r.dir)['FailedCall(C)'] || 0), 0);

    // 1. registration, paced
    const reg0 = sample(procs);
    const regStart = performance.now();
    let registeredAll: number | null = null;
    let lastPrint = 0;
    let most = 0;
    let progressAt = 0;
    // the bench's own reads stay small beside the fleet (it shares the 2 cores): each poll reads the size of
    // Redis's keyspace (only owner keys live there, each with its TTL; O(1)); the owner keys themselves are
    // counted (EXISTS) once that says all may be there, and read (MGET) for each progress line. Sending
    // 300,000 keys every 5 s took the bench 18 % of a core (ioredis encodes each argument)
    for (;;) {
      await sleep(QUICK ? POLL_MS : 5000);
      const elapsed = (performance.now() - regStart) / 1000;
      const full = elapsed - lastPrint >= (QUICK ? 10 : 60);
      const o = full ? await owners(ids) : [];
      const owned = full ? o.filter((x) => x !== null).length : (await redis.dbsize()) >= DEVICES ? await ownedCount(ids) : 0;
      if (owned >= DEVICES) {
        registeredAll = elapsed;
        break;
      }
      if (owned > most) [most, progressAt] = [owned, elapsed];
      // no progress for this long: the machine cannot hold the fleet (on the shared 2-core machine at load
      // 14-19 the shards' event loops lagged 5-10 s, missed their heartbeats, and the edge saw none online)
      if (elapsed - progressAt > STALL_S) throw new Error(`registration stalled at ${owned} of ${DEVICES} for ${STALL_S} s (${await edgeView()}; load ${load()})`);
      if (full) {
        lastPrint = elapsed;
        out(`${phase()}  registering: ${owned} of ${DEVICES} owned ${JSON.stringify(Object.fromEntries(tally(o)))}; ${await edgeView()}; SIPp failed ${failedCalls()}; load ${load()}`);
      }
      if (elapsed > REGISTER_DEADLINE_S) break;
    }
    const reg1 = sample(procs);
    const ownersBefore = await owners(ids);
    const split = tally(ownersBefore);
    out(
      `${phase()}  registration: ${registeredAll === null ? `NOT all by ${REGISTER_DEADLINE_S} s` : `all ${DEVICES} in ${registeredAll.toFixed(0)} s (${Math.round(DEVICES / registeredAll)}/s)`}; ` +
        `per shard ${CODES.map((c) => `${c} ${split.get(c) ?? 0}`).join(', ')}; online in the store ${await onlineInStore()}; load ${load()}`,
    );

    // 2. settle: keepalives only, one per device per minute; the steady-state CPU window
    const kaBefore = await metric(edgeMetrics, 'vms_edge_requests_forwarded_total', ['method="MESSAGE"', 'direction="device_to_shard"']);
    const settle0 = sample(procs);
    await sleep(SETTLE_S * 1000);
    const settle1 = sample(procs);
    const kaRate = ((await metric(edgeMetrics, 'vms_edge_requests_forwarded_total', ['method="MESSAGE"', 'direction="device_to_shard"'])) - kaBefore) / ((settle1.at - settle0.at) / 1000);
    out(`${phase()}  settled ${SETTLE_S} s: ${kaRate.toFixed(0)} keepalives/s through the edge (expected ${(DEVICES / (KEEPALIVE_MS / 1000)).toFixed(0)}); ${conntrack()}; load ${load()}`);

    // 3. kill -9 of one shard
    const movers = ids.filter((_, i) => ownersBefore[i] === KILLED);
    const stayers = ids.filter((_, i) => ownersBefore[i] !== KILLED && ownersBefore[i] !== null);
    const stayerOwner = new Map(ids.flatMap((id, i) => (ownersBefore[i] === KILLED || ownersBefore[i] === null ? [] : [[id, ownersBefore[i]] as const])));
    const failedBefore = failedCalls();
    const shed0 = await Promise.all(SURVIVORS.map((c) => metric(`${shards.get(c)!.httpUrl}/metrics`, 'vms_sip_responses_total', ['direction="out"', 'method="REGISTER"', 'status="503"'])));
    const edgeShed0 = await metric(edgeMetrics, 'vms_edge_shed_total');
    const killAt = performance.now();
    const kill0 = sample(procs);
    await shards.get(KILLED)!.proc.kill();
    out(`${phase()}  kill -9 ${KILLED} (${movers.length} devices) at ${utc()}, load ${load()}`);
    let allBackS: number | null = null;
    let firstBackS: number | null = null;
    const stayersOffline = new Set<string>();
    const stayersMoved = new Set<string>();
    let lastStayerCheck = 0;
    lastPrint = 0;
    let back = 0;
    // each poll reads the owner keys of the movers not yet seen back; the store's offline rows and the
    // survivors' own devices every 10 s and 30 s; every mover again once all look back (a lapse counts)
    let notBack: readonly string[] = movers;
    let moversOffline = movers.length;
    let lastOfflineCheck = -Infinity;
    let lastReadMs = 0;
    for (;;) {
      // paced by its own cost too (at most a tenth of the time reading): 100,000 keys take the bench ~1 s
      await sleep(Math.max(POLL_MS, 10 * lastReadMs));
      const elapsed = (performance.now() - killAt) / 1000;
      const readAt = performance.now();
      const o = await owners(notBack);
      lastReadMs = performance.now() - readAt;
      notBack = notBack.filter((_, i) => !(o[i] !== null && SURVIVORS.includes(o[i] as string)));
      if (notBack.length === 0) {
        const all = await owners(movers);
        notBack = movers.filter((_, i) => !(all[i] !== null && SURVIVORS.includes(all[i] as string)));
      }
      back = movers.length - notBack.length;
      if (firstBackS === null && back > 0) firstBackS = elapsed;
      if (elapsed - lastOfflineCheck >= 10 || back >= movers.length) {
        lastOfflineCheck = elapsed;
        const offline = await offlineInStore();
        for (const id of offline) if (stayerOwner.has(id)) stayersOffline.add(id);
        moversOffline = movers.filter((id) => offline.has(id)).length;
      }
      if (elapsed - lastStayerCheck >= 30 || back >= movers.length) {
        lastStayerCheck = elapsed;
        const so = await owners(stayers);
        so.forEach((x, i) => {
          if (x !== stayerOwner.get(stayers[i]!)) stayersMoved.add(stayers[i]!);
        });
      }
      if (elapsed - lastPrint >= (QUICK ? 10 : 30)) {
        lastPrint = elapsed;
        out(`${phase()}  +${elapsed.toFixed(0)} s: ${back} of ${movers.length} back (${movers.length - moversOffline} not offline in the store); survivors' devices offline ${stayersOffline.size}, moved ${stayersMoved.size}; ${await edgeView()}; SIPp failed ${failedCalls() - failedBefore}; load ${load()}`);
      }
      if (back >= movers.length && moversOffline === 0) {
        allBackS = elapsed;
        break;
      }
      if (elapsed > DEADLINE_S) break;
    }
    const recovered = sample(procs);
    const shed1 = await Promise.all(SURVIVORS.map((c) => metric(`${shards.get(c)!.httpUrl}/metrics`, 'vms_sip_responses_total', ['direction="out"', 'method="REGISTER"', 'status="503"'])));
    const edgeShed = (await metric(edgeMetrics, 'vms_edge_shed_total')) - edgeShed0;
    const lost = movers.length - back;
    out(
      `${phase()}  ${allBackS === null ? `NOT all back by the ${DEADLINE_S} s deadline: ${lost} lost` : `all ${movers.length} back on ${SURVIVORS.join(', ')} ${allBackS.toFixed(1)} s after the kill`} ` +
        `(first at ${firstBackS?.toFixed(1) ?? '—'} s); survivors' REGISTER 503s ${shed1.reduce((s, x, i) => s + x - (shed0[i] ?? 0), 0)}, edge 503s ${edgeShed}; load ${load()}`,
    );

    // 4. the fleet after: steady keepalives again; survivors' devices checked once more
    const after0 = sample(procs);
    await sleep(AFTER_S * 1000);
    const after1 = sample(procs);
    const finalStayers = await owners(stayers);
    finalStayers.forEach((x, i) => {
      if (x !== stayerOwner.get(stayers[i]!)) stayersMoved.add(stayers[i]!);
    });
    for (const id of await offlineInStore()) if (stayerOwner.has(id)) stayersOffline.add(id);
    const finalMovers = await owners(movers);
    const lostAfter = finalMovers.filter((x) => x === null || !SURVIVORS.includes(x)).length;
    // who they are, for the report: owner now and the store's view of each (database clock)
    const strays = [...movers.filter((_, i) => finalMovers[i] === null || !SURVIVORS.includes(finalMovers[i] as string)).slice(0, 5), ...[...stayersOffline, ...stayersMoved].slice(0, 5)];
    if (strays.length > 0) {
      const [rows] = await pool.query<RowDataPacket[]>('SELECT device_id, online, keepalive_at, registered_at, NOW(3) AS now FROM gb_device WHERE device_id IN (?)', [strays]);
      const seen = new Map(rows.map((r) => [String(r.device_id), `online ${String(r.online)}, keepalive ${String(r.keepalive_at)}, registered ${String(r.registered_at)}, now ${String(r.now)}`]));
      const now = await owners(strays);
      out(`  not back / offline / moved (first 5 of each): ${strays.map((id, i) => `${id} ${movers.includes(id) ? 'mover' : `of ${stayerOwner.get(id)}`} now on ${now[i]} (${seen.get(id) ?? 'no row'})`).join('; ')}`);
    }
    const failedSipp = failedCalls();
    const results = await Promise.all(sipps.map((s) => s.stop()));
    const why = failureKinds(results);
    const endSplit = tally(await owners(ids));

    // the table: per process, settle window, recovery (kill → all back), after
    const head = ['process', 'registration: CPU s', '% core', `settle ${SETTLE_S} s: CPU s`, '% core', 'RSS', 'recovery: CPU s', '% core', `after ${AFTER_S} s: % core`, 'RSS after'];
    const lines = procs.map((p) => {
      const rg = cpuOver(reg0, reg1, p.name);
      const st = cpuOver(settle0, settle1, p.name);
      const rc = cpuOver(kill0, recovered, p.name);
      const af = cpuOver(after0, after1, p.name);
      const killed = p.name === KILLED;
      return [
        p.name,
        rg.s.toFixed(1),
        `${rg.pct.toFixed(1)} %`,
        st.s.toFixed(1),
        `${st.pct.toFixed(1)} %`,
        mb(settle1.rss.get(p.name) ?? 0),
        killed ? 'killed' : rc.s.toFixed(1),
        killed ? '—' : `${rc.pct.toFixed(1)} %`,
        killed ? '—' : `${af.pct.toFixed(1)} %`,
        killed ? '—' : mb(after1.rss.get(p.name) ?? 0),
      ];
    });
    out(`\n| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|\n${lines.map((l) => `| ${l.join(' | ')} |`).join('\n')}`);
    out(
      `\nfleet-kill at ${utc()}, ${DEVICES} devices (${SIPP_COUNT} SIPp), load ${load()}:\n` +
        `  registered at ${RATE}/s: ${registeredAll === null ? 'not all' : `all in ${registeredAll.toFixed(0)} s`}; ${CODES.map((c) => `${c} ${split.get(c) ?? 0}`).join(', ')}; keepalives ${kaRate.toFixed(0)}/s settled\n` +
        `  kill -9 ${KILLED}: ${movers.length} devices; all back ${allBackS === null ? `— (deadline ${DEADLINE_S} s)` : `${allBackS.toFixed(1)} s`} after the kill; lost ${lostAfter} (${AFTER_S} s later)\n` +
        `  survivors' devices offline ${stayersOffline.size}, moved ${stayersMoved.size} (of ${stayers.length}); SIPp failed calls ${failedSipp}${why === '' ? '' : ` (${why})`}\n` +
        `  owners at the end: ${JSON.stringify(Object.fromEntries(endSplit))}\n`,
    );
    const met = allBackS !== null && lostAfter === 0 && stayersOffline.size === 0 && stayersMoved.size === 0 && failedSipp === 0;
    const edgeRow = lines.find((l) => l[0] === 'sip-edge');
    printSummary({
      bench: 'fleet-kill',
      what: `${DEVICES.toLocaleString('en')} SIPp devices through the SIP edge on 3 shards (Redis + MariaDB), one keepalive per device per 60 s; kill -9 of one shard`,
      figures:
        `${movers.length} devices of the killed shard all back in ${allBackS === null ? '—' : `${allBackS.toFixed(0)} s`}, lost ${lostAfter}, survivors' offline ${stayersOffline.size}, SIPp failed ${failedSipp}; ` +
        `settled at ${kaRate.toFixed(0)} keepalives/s: ${lines.filter((l) => CODES.includes(l[0] as (typeof CODES)[number])).map((l) => `${l[0]} ${l[4]} ${l[5]}`).join(', ')}, edge ${edgeRow?.[4]} ${edgeRow?.[5]} (load ${load()})`,
      target: '0 lost, no device of a surviving shard offline',
      met,
    });
  } finally {
    // what went wrong, if anything: the warnings and errors the services logged (the last 256 KiB of each)
    for (const [name, p] of [...[...shards].map(([c, s]) => [c, s.proc] as const), ['sip-edge', edge] as const]) {
      const w = p === null ? '' : warnings(p.output());
      if (w !== '') out(`  ${name} logged: ${w}`);
    }
    for (const s of sipps) await s.kill().catch(() => undefined);
    await edge?.stop().catch(() => undefined);
    for (const s of shards.values()) await s.proc.stop().catch(() => undefined);
    await stores.stop();
    for (const s of sipps) rmSync(s.dir, { recursive: true, force: true });
  }
}

await main();
