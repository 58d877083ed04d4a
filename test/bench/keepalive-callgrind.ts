// Instructions per keepalive of the device side, counted with callgrind: a figure that does not move
// when other work shares the machine (the wall-clock bench keepalive.ts needs a quiet one).
// Run from the repository root: npx tsx test/bench/keepalive-callgrind.ts [--devices N] [--warmup W] [--count M]
//   [--quick]  (1,000 devices, 3,000 warm-up, 1,000 counted: a less warmed-up JIT, so a higher figure; most of its
//   ~3 min under valgrind is the node start-up, not the keepalives)
//
//  1. starts, under `valgrind --tool=callgrind --instr-atstart=no`, a server process with the real
//     device side (SIP stack, handlers, memory device store; startDeviceSide) and N registered devices
//     (default 10,000), exactly as services/signaling builds it but without HTTP or cluster parts; each
//     device registered from its own UDP port of 127.0.0.1 and keeping alive from it, as a fleet's devices
//     each have their own flow (`--shared-flow`: all from one port, as the runs before 3 Dec 2026);
//  2. sends W keepalives (default 20,000) to warm it up (JIT tiers, inline caches), one at a time, each
//     answered 200 before the next; then zeroes the counters, switches instrumentation on, sends M
//     more (default 5,000), switches it off and dumps;
//  3. prints the server's instructions (Ir, user space, all threads) per keepalive, the same for a
//     bare Node UDP echo server (receive, send back) as the floor no SIP code can go below, and for
//     Kamailio 5.6 (test/bench/kamailio: the fleet bench's cfg, stateless 200 for MESSAGE, `-x fm`, one
//     UDP child) answering the same keepalives, all its processes summed (issue 11, target 4): ratios
//     from one run that do not move with the machine's load. `--no-kamailio` skips it.
// `--redis` adds the platform with REDIS_URL (issue 11 target 4, "≤ 2× including Redis ownership
// renewal and redis-server's own CPU"): the same device side plus the cluster side as app.ts wires it
// (openCluster: batched Redis ownership store, the recorder and its periodic check; bridgeOwnership
// reports every keepalive), against a redis-server (no persistence) that also runs under callgrind and
// is counted in the same window. After the warm-up the server takes a full collection, its JIT settles
// (blocks of keepalives until two pass without a tier-up or deopt line, SETTLE_BLOCK), every claim is
// renewed at once (RENEW_DUE_MS), and after a pause (RENEW_PAUSE_MS) the window sends two keepalives to
// each of COUNT / 2 devices, one pass over them and then a second: the first renews the device's claim
// (written more than vms.cluster.owner-renew-after's 84 s before), the second, ~COUNT / 2 keepalives
// later, does not — half the keepalives renew, as at the default 60 s interval where every other
// keepalive renews; it prints both counts, their sum against Kamailio, and the Redis commands the window
// ran (INFO commandstats, scripts' commands included). `--only-redis` runs that server alone. `--rate R` paces that window (DEVICES / 60: the real rate of the fleet, idle costs and
// all).
// The server runs this file with `--serve keepalive|keepalive-redis|echo`. valgrind makes it ~50× slower: a run takes
// a minute or two. Everything the server does during the counted window is billed (timers, GC), so
// the figure is the cost per keepalive at the ping-pong rate valgrind allows, not a per-function one;
// callgrind_annotate on the kept output file (--keep) shows where it goes; with --perf-map the server
// node also writes /tmp/perf-<pid>.map (--perf-basic-prof), which names the JIT code addresses
// callgrind_annotate shows as `???:0x…` (the last entry covering an address; code moved by GC may
// be misnamed).
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKamailioCommand } from './kamailio/kamailio.ts';
import { processTree } from './kamailio/proc.ts';
import { commandCalls, minus, startRedisUnderCallgrind } from './redis-callgrind.ts';
import { isQuick, printSummary } from './summary.ts';

const SELF = fileURLToPath(import.meta.url);
const SERVER_ID = '34020000002000000001';
const REALM = SERVER_ID.slice(0, 10);

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
const QUICK = isQuick();
/** `--redis`: also the platform with REDIS_URL (ownership renewal) and redis-server, both counted. */
const WITH_REDIS = process.argv.includes('--redis');
/** `--only-redis`: the keepalive-redis server alone (intermediate runs; no ratio, no summary). */
const ONLY_REDIS = process.argv.includes('--only-redis');
const DEVICES = Number(arg('devices', QUICK ? '1000' : '10000'));
const WARMUP = Number(arg('warmup', QUICK ? '3000' : '20000'));
const COUNT = Number(arg('count', QUICK ? '1000' : '5000'));
/** Kamailio is compiled C: a few keepalives fill its caches; its runs are instrumented throughout. */
const KAM_WARMUP = 500;

/**
 * SEC-1: the devices are bound to the flow they registered from; the driver sends from that port. Each
 * device from its own port (DEVICE_PORT + i), as a fleet's devices each have their own address and port;
 * `--shared-flow`: all from DEVICE_PORT (how the runs before 3 Dec 2026 drove it; a shortcut that finds
 * a device by its flow then falls back to the id, as for devices behind one SIP edge).
 */
const DEVICE_PORT = Number(arg('device-port', '0'));
const SHARED_FLOW = process.argv.includes('--shared-flow');
const devicePortOf = (i: number): number => (SHARED_FLOW ? DEVICE_PORT : DEVICE_PORT + i);

const deviceIdOf = (i: number): string => `3402000000132${String(i + 1).padStart(7, '0')}`;

/** Server mode, under valgrind: the device side with DEVICES registered devices, or a bare echo. */
async function serve(kind: string): Promise<void> {
  if (kind === 'echo') {
    // the floor under our transport's own UDP path: a literal address answered without dns.lookup's
    // extra tick (as udp.ts does), the send without a completion callback (as sendNoWait does)
    const lookup = (host: string, _o: unknown, cb: (err: null, address: string, family: number) => void): void => cb(null, host, 4);
    const s = dgram.createSocket({ type: 'udp4', lookup });
    s.on('message', (d, r) => s.send(d, 0, Math.min(d.length, 300), r.port, r.address));
    s.bind(0, '127.0.0.1', () => {
      (globalThis as { gc?: () => void }).gc?.(); // as below
      process.stdout.write(`READY ${s.address().port}\n`);
    });
    return;
  }
  const { pino } = await import('pino');
  const { loadConfig } = await import('../../services/signaling/src/config/load.ts');
  const { systemClock } = await import('../../services/signaling/src/core/clock.ts');
  const { createMemoryDeviceRepository } = await import('../../services/signaling/src/devices/device-repository.memory.ts');
  const { createDeviceEvents } = await import('../../services/signaling/src/events/device-events.ts');
  const { startDeviceSide } = await import('../../services/signaling/src/sip/device-side.ts');
  const log = pino({ level: 'warn' });
  const redisUrl = kind === 'keepalive-redis' ? arg('redis-url', '') : '';
  const config = loadConfig([], {
    VMS_GB28181_SIP_HOST: '127.0.0.1',
    VMS_GB28181_SIP_PORT: '0',
    VMS_GB28181_SIP_PASSWORD: '',
    ...(redisUrl === '' ? {} : { REDIS_URL: redisUrl, VMS_GB28181_SIP_INSTANCE_ID: 'ka-callgrind-a' }),
  });
  const devices = createMemoryDeviceRepository();
  const events = createDeviceEvents(log);
  const side = await startDeviceSide({ sip: config.sip, devices, events, clock: systemClock, log, utcOffsetMinutes: 480, userAgent: 'vms-signaling/0.1.0' });
  if (redisUrl !== '') {
    // as app.ts wires it with REDIS_URL set (no MySQL): the cluster side (batched Redis ownership store,
    // recorder with its periodic check, owner routing) and the bridge that reports every keepalive to
    // the recorder (OWN-1); HTTP and the node heartbeat are left out, as the device side's are above
    const { openCluster } = await import('../../services/signaling/src/cluster/cluster-wiring.ts');
    const { bridgeOwnership } = await import('../../services/signaling/src/events/ownership-bridge.ts');
    const cluster = await openCluster({ config, devices, clock: systemClock, log, version: '0.1.0', startedAt: Date.now() });
    if (cluster.mode !== 'cluster') throw new Error('REDIS_URL given but the cluster side is standalone');
    bridgeOwnership(events, cluster.recorder, (deviceId) => side.forgetDevice(deviceId));
    // the driver asks for a full collection after the warm-up, then settles the JIT (see SETTLE_BLOCK)
    process.on('SIGUSR2', () => {
      (globalThis as { gc?: () => void }).gc?.();
      process.stdout.write('GC-DONE\n');
    });
  }
  const now = Date.now();
  for (let i = 0; i < DEVICES; i++) {
    const deviceId = deviceIdOf(i);
    const flow = { transport: 'udp' as const, remoteAddress: '127.0.0.1', remotePort: devicePortOf(i), localAddress: '127.0.0.1', localPort: side.sipPort };
    await devices.registerDevice({ deviceId, transport: 'UDP', remoteIp: '127.0.0.1', remotePort: flow.remotePort, expiresSec: 3600, at: now });
    side.flows.register({ deviceId, flow, charset: 'GB2312', gbVersion: '2016', registeredAt: now, expiresAt: now + 3600_000 });
  }
  // A full collection now, not V8's memory reducer later: started by time after the start-up's
  // allocations, it lands in the counted window of one run in two under valgrind's slowness and bills
  // a mark-compact (~250M instructions) to 5,000 keepalives; without valgrind 120,000 keepalives run
  // with no mark-compact at all (--trace-gc).
  (globalThis as { gc?: () => void }).gc?.();
  process.stdout.write(`READY ${side.sipPort}\n`);
}

/** A keepalive as test/sipp/keepalive.xml sends it: GB2312 declaration, Via with rport, no To-tag. */
function keepalive(k: number, localPort: number, device = k % DEVICES): Buffer {
  const id = deviceIdOf(device);
  const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${k}</SN>\r\n<DeviceID>${id}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`;
  const lines = [
    `MESSAGE sip:${SERVER_ID}@${REALM} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};rport;branch=z9hG4bK-${process.pid}-${k}-0`,
    `From: <sip:${id}@${REALM}>;tag=${process.pid}k${k}`,
    `To: <sip:${SERVER_ID}@${REALM}>`,
    `Call-ID: ${k}-${process.pid}@127.0.0.1`,
    'CSeq: 20 MESSAGE',
    'Content-Type: Application/MANSCDP+xml',
    'Max-Forwards: 70',
    `Content-Length: ${body.length}`,
    '',
    body,
  ];
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

/**
 * Sends keepalives first..first+n-1 one at a time (resent after 2 s if unanswered); returns the non-200 count.
 * `perSecond`: at most that many a second (the next one waits for its slot as well as for the answer).
 */
async function drive(port: number, first: number, n: number, echo: boolean, sockets: DeviceSockets, perSecond = Infinity, deviceOf?: (k: number) => number): Promise<number> {
  const socketOf = (k: number): dgram.Socket => sockets.of(deviceOf?.(k) ?? k % DEVICES);
  const expected = echo ? 'MESSAGE ' : 'SIP/2.0 200 ';
  let k = first;
  let bad = 0;
  const startedAt = Date.now();
  let listener: (d: Buffer) => void = () => {};
  await new Promise<void>((done) => {
    let timer: NodeJS.Timeout | undefined;
    const next = (): void => {
      clearTimeout(timer);
      if (k >= first + n) {
        done();
        return;
      }
      const sock = socketOf(k);
      const m = keepalive(k, sock.address().port, deviceOf?.(k));
      sock.send(m, port, '127.0.0.1');
      timer = setTimeout(() => sock.send(m, port, '127.0.0.1'), 2000);
    };
    const onAnswer = (d: Buffer): void => {
      if (!d.toString('latin1', 0, expected.length).startsWith(expected)) bad++;
      k++;
      clearTimeout(timer); // the resend of the one just answered
      const wait = startedAt + ((k - first) * 1000) / perSecond - Date.now();
      if (wait > 0) timer = setTimeout(next, wait);
      else next();
    };
    listener = onAnswer;
    for (const s of sockets.all) s.on('message', onAnswer);
    next();
  });
  for (const s of sockets.all) s.off('message', listener);
  return bad;
}

/** The driver's device sockets: one per device on ports base … base + DEVICES - 1, or one (`--shared-flow`). */
interface DeviceSockets {
  readonly base: number;
  readonly all: readonly dgram.Socket[];
  of(device: number): dgram.Socket;
  close(): void;
}

function bindUdp(port: number): Promise<dgram.Socket | undefined> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    s.once('error', () => {
      s.close();
      resolve(undefined);
    });
    s.bind(port, '127.0.0.1', () => resolve(s));
  });
}

/** A free range of DEVICES ports below the ephemeral range (bound here, so the range stays ours), or one port. */
async function openDeviceSockets(): Promise<DeviceSockets> {
  if (SHARED_FLOW) {
    const one = await bindUdp(await freeUdpPort());
    if (one === undefined) throw new Error('no free UDP port for the device socket');
    return { base: one.address().port, all: [one], of: () => one, close: () => one.close() };
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * (32_000 - 10_000 - DEVICES));
    const all: dgram.Socket[] = [];
    for (let i = 0; i < DEVICES; i++) {
      const s = await bindUdp(base + i);
      if (s === undefined) break;
      all.push(s);
    }
    if (all.length === DEVICES) return { base, all, of: (device) => all[device] as dgram.Socket, close: () => all.forEach((s) => s.close()) };
    for (const s of all) s.close();
  }
  throw new Error(`no free range of ${DEVICES} UDP ports for the devices`);
}

function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) =>
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    }),
  );
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} failed: ${r.stderr}`);
}

interface Count {
  readonly instructions: number;
  readonly bad: number;
  readonly file: string;
  readonly pid: number;
  /** Of `instructions`, those in V8's old-generation GC (0 for Kamailio). */
  readonly majorGc: number;
  /** Wall-clock length of the counted window, ms. */
  readonly windowMs: number;
  /** keepalive-redis: redis-server's own count in the same window. */
  readonly redis?: RedisCount;
  /** keepalive-redis: the second window, IDLE_WINDOW_MS without keepalives (platform; redis-server in `redis`). */
  readonly idle?: { readonly instructions: number; readonly ms: number };
  /** Of `instructions`, those in V8's background optimising compiler (0 for Kamailio). */
  readonly compile: number;
  /** Of `instructions`, those in V8's young-generation collections (0 for Kamailio). */
  readonly minorGc: number;
  /** keepalive-redis: blocks of SETTLE_BLOCK it took, whether the cap came first, tier-up/deopt lines in the busy window. */
  readonly settle?: { readonly blocks: number; readonly settled: boolean; readonly jitLinesInWindow: number };
}

interface RedisCount {
  readonly instructions: number;
  readonly file: string;
  /** Commands redis-server ran in the window (INFO commandstats before and after), by name. */
  readonly commands: ReadonlyMap<string, number>;
  readonly idleInstructions: number;
  readonly idleCommands: ReadonlyMap<string, number>;
}

/**
 * keepalive-redis's second window, with no keepalives: what the servers do by the clock (timers, the
 * ownership check pass every scan period over every live lease, redis-server's cron), per second. Two
 * scan periods and a second, so it holds two passes. Taken out of the busy window at its length, it
 * leaves the cost of a keepalive itself (renewal included); added back at a given rate, the cost per
 * keepalive of a fleet sending that many a second.
 */
const IDLE_WINDOW_MS = 61_000;

type Kind = 'keepalive' | 'keepalive-redis' | 'echo' | 'kamailio';

/**
 * keepalive-redis, after the warm-up: a full collection (SIGUSR2: gc(), so no mark-compact the warm-up's
 * garbage would bring falls in the windows by chance), then the JIT settles — a forced collection flushes
 * compiled code, so the next keepalives and renewals run in the interpreter and tier up again, which was
 * most of the busy window before (2 Dec run F: TurboFan 66k per keepalive) — as edge-callgrind.ts and
 * register-callgrind.ts do: node runs with --trace-opt --trace-deopt (line-buffered through stdbuf), and
 * blocks of SETTLE_BLOCK keepalives (the window's pattern, windowDevice) go until SETTLE_QUIET_BLOCKS in a
 * row pass with no tier-up or deopt line, at most SETTLE_MAX_BLOCKS (printed). No collection is forced
 * after that (it would flush the code again).
 */
const SETTLE_BLOCK = 1000;
const SETTLE_QUIET_BLOCKS = 2;
const SETTLE_MAX_BLOCKS = 20;
/** --trace-opt / --trace-deopt lines: a function marked, compiled, installed or deoptimized (as edge-callgrind.ts). */
const JIT_LINE = /^\[(marking|compiling method|completed (compiling|optimizing)|bailout|deoptimiz)/gm;

/**
 * keepalive-redis: one pass over the window's COUNT / 2 devices takes at least this long while settling
 * (the blocks are paced to it), so the renewal path runs all along (each claim renewed on every other
 * pass, ~25 a second in batches of one a second, as a fleet's at the defaults). Unpaced, valgrind passes
 * over the devices in a few seconds on a quiet machine (~300 keepalives a second) and ~40 s on a loaded one:
 * a renewal (due 84 s after the claim's last write, vms.cluster.owner-renew-after 0.4 × 210 s) came in bursts
 * or every third keepalive, so the claims' ages at the window were spread and some had lapsed (2 Dec run
 * F: 170 SETs of vacant claims among the 2,500 renewals) or were read by the check pass.
 */
const SETTLE_PASS_MS = 48_000;
/**
 * keepalive-redis, after the settling: every claim's age made the same, so each device's first window
 * keepalive renews and its second does not whatever valgrind's pace: a pause of RENEW_DUE_MS (each claim
 * then due: written at most one paced pass, 48 s, before, and read by no check pass, which reads claims
 * older than 144 s), one pass over the devices as fast as answered (each renews), then RENEW_PAUSE_MS:
 * the window's passes go at the same pace as that one, so each claim is ~RENEW_PAUSE_MS old at its first
 * window keepalive (past 84 s, before 144 s) and was renewed ~one pass before its second. Not counted.
 */
const RENEW_DUE_MS = 86_000;
const RENEW_PAUSE_MS = 90_000;

/**
 * keepalive-redis, warm-up, settling and counted window: keepalive k goes to device k mod COUNT / 2, so each of those
 * devices gets one every COUNT / 2 keepalives (one pass, ~40 s under valgrind: more than the 1 s a renewal waits,
 * less than the 84 s before the next one is due). In the window the first of a device renews, the second
 * does not: half the keepalives renew, as in the steady state at the default interval (60 s) and
 * owner-renew-after (84 s). The warm-up runs both paths many times over, so the JIT has compiled them.
 */
const windowDevice = (k: number): number => k % Math.max(1, Math.floor(COUNT / 2));

/**
 * `--rate R`: keepalive-redis's counted keepalives at most R a second (DEVICES / 60 is each device once a
 * minute, the default interval: what is then billed per keepalive includes the idle servers' timers and
 * redis-server's cron, ~1.5M instructions a second under valgrind). Default: one at a time as fast as
 * answered, like the other servers.
 */
const RATE = Number(arg('rate', 'Infinity'));

/** The per-pid callgrind totals of files `${name}.<pid>[.n]` in dir (only dump `n` if given): per process the largest, summed. */
function totalsOf(dir: string, name: string, dump?: number): { instructions: number; file: string } {
  const perPid = new Map<string, { instructions: number; file: string }>();
  for (const f of readdirSync(dir).filter((n) => n.startsWith(`${name}.`) && (dump === undefined || n.endsWith(`.${dump}`)))) {
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
    const v = m === null ? 0 : Number(m[1]);
    const p = f.slice(name.length + 1).split('.')[0] ?? '';
    if (v >= (perPid.get(p)?.instructions ?? 0)) perPid.set(p, { instructions: v, file: join(dir, f) });
  }
  const all = [...perPid.values()].sort((a, b) => b.instructions - a.instructions);
  return { instructions: all.reduce((sum, x) => sum + x.instructions, 0), file: all[0]?.file ?? '' };
}

/**
 * Node servers: W warm-up keepalives, then M counted between callgrind_control's zero and dump.
 * keepalive-redis: redis-server runs under callgrind too and is counted in the same window, which comes
 * after a collection, the JIT's settling and RENEW_PAUSE_MS, and renews on every other keepalive (windowDevice).
 * Kamailio: its forked workers get no vgdb channel (callgrind_control does not see them), so it runs
 * instrumented from the start and exits after `whole` keepalives; measureKamailio subtracts two runs.
 */
async function measure(kind: Kind, dir: string, whole?: { readonly label: string; readonly sends: number }): Promise<Count> {
  const name = `callgrind.${kind}${whole === undefined ? '' : `-${whole.label}`}`;
  const out = join(dir, name);
  const sockets = await openDeviceSockets();
  const kamailio = kind === 'kamailio' ? await startKamailioCommand({ children: 1, auth: false }) : undefined;
  const redis = kind === 'keepalive-redis' ? await startRedisUnderCallgrind(join(dir, 'callgrind.redis-server')) : undefined;
  const perfMap = process.argv.includes('--perf-map') ? ['--perf-basic-prof'] : [];
  // keepalive-redis settles its JIT (SETTLE_BLOCK): tier-up and deopt lines, line-buffered (node's
  // --trace-opt goes through C stdio, fully buffered into a pipe), so a block without one had none
  const settle = kind === 'keepalive-redis' && whole === undefined;
  const node = [
    process.execPath, '--expose-gc', ...(settle ? ['--trace-opt', '--trace-deopt'] : []), ...perfMap, ...process.execArgv, SELF, '--serve', kind, '--devices', String(DEVICES), '--device-port', String(sockets.base), ...(SHARED_FLOW ? ['--shared-flow'] : []),
    ...(redis === undefined ? [] : ['--redis-url', redis.url]),
  ];
  const command = kamailio === undefined ? node : [kamailio.bin, ...kamailio.args];
  // %p: Kamailio forks its workers (valgrind follows a fork without exec), one file per process
  const valgrind = [...(settle ? ['stdbuf', '-oL'] : []), 'valgrind', '--tool=callgrind', `--instr-atstart=${whole === undefined ? 'no' : 'yes'}`, `--callgrind-out-file=${out}.%p`];
  const child = spawn(valgrind[0] as string, [...valgrind.slice(1), ...command], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const jitLines = (): number => stdout.match(JIT_LINE)?.length ?? 0;
  let settled: Count['settle'];
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const pid = child.pid as number;
  let bad = 0;
  let windowMs = 0;
  let commands = new Map<string, number>();
  let idleCommands = new Map<string, number>();
  let idleMs = 0;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      void exited.then(() => reject(new Error(`${kind} server exited before READY:\n${stderr.slice(-2000)}`)));
      if (kamailio !== undefined) {
        // ready when its workers are forked (UDP child, timers, ctl); a keepalive sent before its socket
        // is read is resent by the driver after 2 s
        const poll = setInterval(() => {
          if (processTree(child.pid as number).length > 3) {
            clearInterval(poll);
            setTimeout(() => resolve(kamailio.port), 2000);
          }
        }, 200);
        void exited.then(() => clearInterval(poll));
        return;
      }
      child.stdout.on('data', () => {
        const m = /READY (\d+)/.exec(stdout);
        if (m !== null) resolve(Number(m[1]));
      });
    });
    if (whole !== undefined) {
      bad += await drive(port, 0, whole.sends, false, sockets);
    } else {
      bad += await drive(port, 0, WARMUP, kind === 'echo', sockets, Infinity, redis === undefined ? undefined : windowDevice);
      let k = WARMUP;
      if (redis !== undefined) {
        // the warm-up's garbage collected now (SIGUSR2: gc()), not by a mark-compact in the windows (one
        // fell in both windows of a run: 33k per keepalive in the busy one, most of the idle one); then the
        // JIT settles (SETTLE_BLOCK), on the window's devices paced to SETTLE_PASS_MS a pass; then every claim renewed at once (RENEW_DUE_MS)
        const done = stdout.split('GC-DONE').length;
        child.kill('SIGUSR2');
        while (stdout.split('GC-DONE').length === done) {
          if (child.exitCode !== null) throw new Error(`${kind} server exited in the collection:\n${stderr.slice(-2000)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const perSecond = (windowDevice(COUNT - 1) + 1) / (SETTLE_PASS_MS / 1000);
        // two paced passes at least: every claim is then renewed on every other keepalive (SETTLE_PASS_MS)
        const minBlocks = Math.ceil((2 * (windowDevice(COUNT - 1) + 1)) / SETTLE_BLOCK);
        let blocks = 0;
        let quiet = 0;
        while ((quiet < SETTLE_QUIET_BLOCKS || blocks < minBlocks) && blocks < SETTLE_MAX_BLOCKS) {
          const before = jitLines();
          bad += await drive(port, k, SETTLE_BLOCK, false, sockets, perSecond, windowDevice);
          k += SETTLE_BLOCK;
          blocks++;
          quiet = jitLines() === before ? quiet + 1 : 0;
        }
        settled = { blocks, settled: quiet >= SETTLE_QUIET_BLOCKS, jitLinesInWindow: 0 };
        await new Promise((r) => setTimeout(r, RENEW_DUE_MS));
        const pass = windowDevice(COUNT - 1) + 1;
        bad += await drive(port, k, pass, false, sockets, Infinity, windowDevice);
        k += pass;
        await new Promise((r) => setTimeout(r, RENEW_PAUSE_MS));
      }
      const jitBefore = jitLines();
      const pids = [...processTree(pid), ...(redis === undefined ? [] : [redis.pid])];
      const before = redis === undefined ? undefined : await commandCalls(redis.port);
      for (const p of pids) control(p, '-z');
      for (const p of pids) control(p, '-i', 'on');
      const t0 = Date.now();
      bad += await drive(port, k, COUNT, kind === 'echo', sockets, redis === undefined ? Infinity : RATE, redis === undefined ? undefined : windowDevice);
      windowMs = Date.now() - t0;
      if (settled !== undefined) settled = { ...settled, jitLinesInWindow: jitLines() - jitBefore };
      for (const p of pids) control(p, '-i', 'off');
      for (const p of pids) control(p, '-d');
      if (redis !== undefined && before !== undefined) {
        commands = minus(await commandCalls(redis.port), before);
        const idleBefore = await commandCalls(redis.port);
        for (const p of pids) control(p, '-z');
        for (const p of pids) control(p, '-i', 'on');
        const t1 = Date.now();
        await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
        idleMs = Date.now() - t1;
        for (const p of pids) control(p, '-i', 'off');
        for (const p of pids) control(p, '-d');
        idleCommands = minus(await commandCalls(redis.port), idleBefore);
      }
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
    kamailio?.cleanup();
    await redis?.stop();
    sockets.close();
    // with --keep, the server's output beside the dumps (settling: its tier-up and deopt lines)
    if (settle && process.argv.includes('--keep')) writeFileSync(join(dir, `${name}.output.txt`), stdout);
  }
  // The dump requested above goes to `${out}.<pid>.1` (the final one at exit, all zero since, to
  // `${out}.<pid>`; with `whole`, only the one at exit): per process the largest total, summed over the
  // processes.
  // keepalive-redis: dump 1 is the busy window, dump 2 the idle one
  const server = totalsOf(dir, name, redis === undefined ? undefined : 1);
  const rs =
    redis === undefined
      ? undefined
      : { ...totalsOf(dir, 'callgrind.redis-server', 1), commands, idleInstructions: totalsOf(dir, 'callgrind.redis-server', 2).instructions, idleCommands };
  return {
    instructions: server.instructions,
    bad,
    file: server.file,
    pid,
    majorGc: kind === 'kamailio' ? 0 : majorGcOf(server.file === '' ? undefined : server.file),
    compile: kind === 'kamailio' || server.file === '' ? 0 : inclusiveOf(server.file, /OptimizingCompileDispatcher::CompileTask::RunInternal/),
    minorGc: kind === 'kamailio' || server.file === '' ? 0 : inclusiveOf(server.file, /MinorGCJob::Task::RunInternal|Heap::CollectGarbage/),
    windowMs,
    ...(rs === undefined ? {} : { redis: rs, idle: { instructions: totalsOf(dir, name, 2).instructions, ms: idleMs } }),
    ...(settled === undefined ? {} : { settle: settled }),
  };
}

/** keepalive-redis's busy window split into the clock's share (the idle window's rate) and the keepalives', per keepalive. */
function splitIdle(c: Count): { platform: number; redis: number; perKeepalive: number; idlePlatformPerS: number; idleRedisPerS: number } {
  const idleS = (c.idle?.ms ?? 0) / 1000;
  const idlePlatformPerS = idleS > 0 ? (c.idle?.instructions ?? 0) / idleS : 0;
  const idleRedisPerS = idleS > 0 ? (c.redis?.idleInstructions ?? 0) / idleS : 0;
  const busyS = c.windowMs / 1000;
  const platform = (c.instructions - idlePlatformPerS * busyS) / COUNT;
  const redis = ((c.redis?.instructions ?? 0) - idleRedisPerS * busyS) / COUNT;
  return { platform, redis, perKeepalive: platform + redis, idlePlatformPerS, idleRedisPerS };
}

/**
 * Instructions in V8's concurrent TurboFan jobs (inclusive). Tiering is by call counts, but a job runs
 * on a background thread, which valgrind serialises with the main one: a job queued in the warm-up can
 * run in the counted window (~27M instructions, ~5k per counted keepalive, in some runs), a one-time cost.
 * The same for the young-generation collections (all GCs, inclusive): their number in the window moved
 * from 1 to 15 between runs of the same code (the new space's size follows wall-clock heuristics, and
 * valgrind stretches wall time ~50×).
 */
function inclusiveOf(file: string | undefined, fn: RegExp): number {
  if (file === undefined) return 0;
  const r = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  let most = 0;
  for (const line of (r.stdout ?? '').split('\n')) {
    const m = /^\s*([\d,]+) \((.*)$/.exec(line);
    if (m !== null && fn.test(m[2] as string)) most = Math.max(most, Number((m[1] as string).replaceAll(',', '')));
  }
  return most;
}

/** Instructions in V8's old-generation collector (marking, sweeping, compaction) in a callgrind file. */
function majorGcOf(file: string | undefined): number {
  if (file === undefined) return 0;
  const r = spawnSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  let sum = 0;
  for (const line of (r.stdout ?? '').split('\n')) {
    const m = /^\s*([\d,]+) \(.*(MarkCompact|ConcurrentMarking|MarkingVisitor|Sweeper|Evacuat|IncrementalMarking)/.exec(line);
    if (m !== null) sum += Number((m[1] as string).replaceAll(',', ''));
  }
  return sum;
}

/** Kamailio's instructions for COUNT keepalives: a run with KAM_WARMUP + COUNT minus one with KAM_WARMUP (start-up, exit). */
async function measureKamailio(dir: string): Promise<Count> {
  const base = await measure('kamailio', dir, { label: 'base', sends: KAM_WARMUP });
  const full = await measure('kamailio', dir, { label: 'full', sends: KAM_WARMUP + COUNT });
  return { instructions: full.instructions - base.instructions, bad: base.bad + full.bad, file: full.file, pid: full.pid, majorGc: 0, compile: 0, minorGc: 0, windowMs: 0 };
}

/** keepalive-redis's figures; `standalone`: the keepalive server's per keepalive, when measured. */
function printRedis(kr: Count, split: ReturnType<typeof splitIdle>, standalone: number | undefined): void {
  const n = (v: number): string => Math.round(v).toLocaleString('en-US');
  const cmdList = (m: ReadonlyMap<string, number> | undefined): string => {
    const list = [...(m ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
    return list.length === 0 ? 'none' : list.map(([c, v]) => `${c} ${v}`).join(', ');
  };
  const fleetRate = DEVICES / 60;
  process.stdout.write(
    `keepalive + Redis ownership, busy window: ${n(kr.instructions / COUNT)} (platform) + ${n((kr.redis?.instructions ?? 0) / COUNT)} (redis-server) instructions per keepalive ` +
      `(${COUNT} keepalives in ${(kr.windowMs / 1000).toFixed(1)} s${Number.isFinite(RATE) ? `, paced at ≤ ${RATE.toFixed(1)}/s` : ''})\n`,
  );
  if (kr.majorGc > kr.instructions * 0.05) {
    process.stdout.write(`  of which V8 old-generation GC: ${n(kr.majorGc / COUNT)} per keepalive (a mark-compact fell in the counted window; run again)\n`);
  }
  process.stdout.write(`  of which (platform) TurboFan compilation ${n(kr.compile / COUNT)}, V8 GC, all kinds ${n(kr.minorGc / COUNT)} per keepalive\n`);
  if (kr.settle !== undefined) {
    const s = kr.settle;
    process.stdout.write(
      `  JIT: settled after ${s.blocks} × ${SETTLE_BLOCK} keepalives past the warm-up and a full collection${s.settled ? '' : ' (NOT settled: the cap was reached)'}; ${s.jitLinesInWindow} tier-up/deopt lines in the busy window\n`,
    );
  }
  process.stdout.write(`  Redis commands: ${cmdList(kr.redis?.commands)}\n`);
  // each renewal script runs one MGET; any other MGET is a check pass reading owners
  const checkReads = (kr.redis?.commands.get('mget') ?? 0) - (kr.redis?.commands.get('evalsha') ?? 0);
  if (checkReads > 0) process.stdout.write(`  ${checkReads} MGETs beyond the renewal scripts' own: check passes read claims in the busy window\n`);
  const written = ['set', 'pexpire'].reduce((sum, c) => sum + (kr.redis?.commands.get(c) ?? 0), 0);
  process.stdout.write(`  claims written or renewed (SET, PEXPIRE, in scripts too): ${written} for ${COUNT} keepalives (${COUNT / 2} expected: every other one)\n`);
  process.stdout.write(
    `  idle window (${((kr.idle?.ms ?? 0) / 1000).toFixed(1)} s, no keepalives: timers, ownership check passes, redis-server's cron): ` +
      `${n(split.idlePlatformPerS)} (platform) + ${n(split.idleRedisPerS)} (redis-server) instructions a second; Redis commands: ${cmdList(kr.redis?.idleCommands)}\n`,
  );
  process.stdout.write(
    `  per keepalive, the clock's share over the busy window taken out: ${n(split.platform)} (platform) + ${n(split.redis)} (redis-server) = ${n(split.perKeepalive)}` +
      (standalone === undefined ? '\n' : `; the Redis path adds ${n(split.perKeepalive - standalone)} to the standalone figure\n`),
  );
  process.stdout.write(
    `  at one keepalive per device per minute (${n(fleetRate)}/s for ${DEVICES.toLocaleString('en-US')} devices), the clock's share added: ` +
      `${n(split.perKeepalive + (split.idlePlatformPerS + split.idleRedisPerS) / fleetRate)} per keepalive\n`,
  );
}

async function main(): Promise<void> {
  const serveKind = arg('serve', '');
  if (serveKind !== '') return serve(serveKind);
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind not installed');
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'ka-callgrind-'));
  try {
    process.stdout.write(`callgrind: ${DEVICES} devices, ${WARMUP} warm-up keepalives, ${COUNT} counted\n`);
    if (ONLY_REDIS) {
      // intermediate runs of the Redis path alone: no echo, standalone, Kamailio or summary
      const kr = await measure('keepalive-redis', dir);
      printRedis(kr, splitIdle(kr), undefined);
      if (kr.bad > 0) process.stdout.write(`unexpected answers: ${kr.bad}\n`);
      if (keep) process.stdout.write(`callgrind files kept: ${kr.file} ${kr.redis?.file ?? ''}\n`);
      if (process.argv.includes('--perf-map')) process.stdout.write(`JIT code map: /tmp/perf-${kr.pid}.map\n`);
      return;
    }
    const echo = await measure('echo', dir);
    const ka = await measure('keepalive', dir);
    const kr = WITH_REDIS ? await measure('keepalive-redis', dir) : undefined;
    const kam = process.argv.includes('--no-kamailio') ? undefined : await measureKamailio(dir);
    const per = (c: Count): string => Math.round(c.instructions / COUNT).toLocaleString('en-US');
    const x = (a: Count, b: Count): string => `${(a.instructions / b.instructions).toFixed(2)}×`;
    process.stdout.write(`bare Node UDP echo:  ${per(echo)} instructions per datagram\n`);
    if (echo.majorGc > echo.instructions * 0.05) {
      process.stdout.write(`  of which V8 old-generation GC: ${Math.round(echo.majorGc / COUNT).toLocaleString('en-US')} per datagram (a mark-compact fell in the counted window; run again)\n`);
    }
    process.stdout.write(`keepalive (200 OK):  ${per(ka)} instructions per keepalive (${x(ka, echo)} the echo)\n`);
    if (ka.majorGc > ka.instructions * 0.05) {
      process.stdout.write(`  of which V8 old-generation GC: ${Math.round(ka.majorGc / COUNT).toLocaleString('en-US')} per keepalive (a mark-compact fell in the counted window; run again)\n`);
    }
    for (const [label, c] of [['echo', echo], ['keepalive', ka]] as const) {
      if (c.compile > c.instructions * 0.03) {
        process.stdout.write(`  of which (${label}) TurboFan compilation: ${Math.round(c.compile / COUNT).toLocaleString('en-US')} per datagram (a background job ran in the counted window; run again)\n`);
      }
      process.stdout.write(`  of which (${label}) V8 GC, all kinds: ${Math.round(c.minorGc / COUNT).toLocaleString('en-US')} per datagram\n`);
    }
    // keepalive-redis: the busy window minus what the clock alone costs over its length (the idle window's
    // rate): the cost of a keepalive itself, renewal included, comparable with the others' windows (where
    // the clock's share is ~0); and the cost at one keepalive per device per minute, the clock's share added
    const split = kr === undefined ? undefined : splitIdle(kr);
    const withRedis = split?.perKeepalive;
    if (kr !== undefined && split !== undefined) printRedis(kr, split, ka.instructions / COUNT);
    if (kam !== undefined) {
      process.stdout.write(`Kamailio (200 OK):   ${per(kam)} instructions per keepalive, all processes\n`);
      process.stdout.write(`ratios: project/Kamailio ${x(ka, kam)}; bare Node echo/Kamailio ${x(echo, kam)}; project above the echo ${Math.round((ka.instructions - echo.instructions) / COUNT).toLocaleString('en-US')} per keepalive\n`);
      if (withRedis !== undefined) process.stdout.write(`with Redis ownership (platform + redis-server, per keepalive)/Kamailio ${((withRedis * COUNT) / kam.instructions).toFixed(2)}× (target ≤ 2×)\n`);
    }
    const bad = echo.bad + ka.bad + (kr?.bad ?? 0) + (kam?.bad ?? 0);
    if (bad > 0) process.stdout.write(`unexpected answers: ${echo.bad} (echo), ${ka.bad} (keepalive), ${kr?.bad ?? 0} (keepalive + Redis), ${kam?.bad ?? 0} (Kamailio)\n`);
    printSummary({
      bench: 'keepalive-callgrind',
      what: `instructions per keepalive (${DEVICES.toLocaleString('en-US')} devices, ${WARMUP.toLocaleString('en-US')} warm-up, ${COUNT.toLocaleString('en-US')} counted)`,
      figures:
        `${per(ka)} per keepalive, bare UDP echo ${per(echo)}` +
        (withRedis === undefined ? '' : `, with Redis ${Math.round(withRedis).toLocaleString('en-US')} (platform + redis-server)`) +
        (kam === undefined ? '' : `, Kamailio ${per(kam)} (project ${x(ka, kam)}, echo ${x(echo, kam)}${withRedis === undefined ? '' : `, with Redis ${((withRedis * COUNT) / kam.instructions).toFixed(2)}×`})`) +
        (bad > 0 ? `, ${bad} unexpected answers` : ''),
      target:
        kam === undefined
          ? ''
          : `user-space instructions ≤ 1.5× Kamailio's${withRedis === undefined ? '' : ', ≤ 2× with Redis ownership'} (issue 11 target 4 is on CPU; this is its load-independent proxy)`,
      met: kam === undefined ? null : ka.instructions / kam.instructions <= 1.5 && (withRedis === undefined || (withRedis * COUNT) / kam.instructions <= 2),
    });
    if (keep) process.stdout.write(`callgrind files kept: ${echo.file} ${ka.file} ${kr?.file ?? ''} ${kr?.redis?.file ?? ''} ${kam?.file ?? ''} (callgrind_annotate <file>)\n`);
    if (process.argv.includes('--perf-map')) process.stdout.write(`JIT code maps: /tmp/perf-${echo.pid}.map /tmp/perf-${ka.pid}.map${kr === undefined ? '' : ` /tmp/perf-${kr.pid}.map`}\n`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
