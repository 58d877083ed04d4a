// Issue 14: the SIP edge's CPU per forwarded keepalive beside Kamailio 5.6 as a stateless dispatcher, the
// shard's CPU per keepalive through the edge vs direct, and the edge past its ceiling. One run, three parts:
//   npx tsx test/bench/edge.ts [--quick] [--parts 1,2,3]
//
//  1. proxies: Kamailio (bench/edge/dispatcher.cfg: ds_select_dst algorithm 7 = hash over the From user,
//     i.e. the device code; `-x fm`, the memory manager this Debian build is fastest with) and the edge
//     (bench/edge/edge-child.ts) forward the same SIPp keepalives (sipp/edge/keepalive.xml, device ids from
//     an injection file) to the same backend (one Kamailio answering 200 on three ports, the "shards"), one
//     after the other. CPU from /proc (utime + stime of the proxy's processes, Kamailio's children
//     included) around each run; a keepalive forwarded = the request to the backend and its 200 back.
//     Target: edge ≤ 2× Kamailio. /proc time moves with the machine's load (other work evicts caches,
//     steals cycles mid-message): edge-callgrind.ts counts instructions instead, load-independent.
//  2. the shard: a real signaling device side (bench/edge/shard-child.ts) with half its devices bound
//     direct and half behind the edge (SPEC SEC-1: edge flow + `vms-f`); the same keepalives sent direct,
//     then through an edge; the shard's CPU per keepalive in each.
//  3. the ceiling: an edge with VMS_EDGE_MAX_REQUESTS_PER_SEC = C, offered 2×C keepalives per second
//     (open loop, one source per device id range, no per-address bound in the way): how many 200 and how
//     many 503 (each checked for Retry-After), none unanswered, and the p50/p99 of the answers' latency;
//     meanwhile two probes every 100 ms, as a load balancer's health check would: a SIP OPTIONS from its own
//     socket (answered 405 when admitted, 503 when shed: either is an answer) and GET /metrics (the edge's
//     HTTP endpoint, served by the same event loop): answered or not, and their latency.
//  The edge's collections (perf_hooks, edge-child.ts's `tally`) are printed for part 1's run: the mark-compacts
//  over 90,000 keepalives at full speed are what edge-callgrind.ts's window (a collection just before it)
//  leaves out.
import dgram from 'node:dgram';
import { request } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, runSipp, spawnManaged, tmpDir, tsxArgs, writeInjectionCsv, type ManagedProcess } from '@vms/harness';
import { cpuTicks, deviceIdOf, edgeControl, keepalive, SERVER_ID, startKamailio, TICK_US } from './edge/procs.ts';
import { isQuick, printSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCENARIO = join(HERE, '..', 'sipp', 'edge', 'keepalive.xml');
const QUICK = isQuick();
const RATE = QUICK ? 1000 : 3000;
const CALLS = QUICK ? 10_000 : 90_000;
const DEVICES = 1000;
/** Part 3: the edge's ceiling, requests per second, offered twice that for SHED_SECONDS. */
const CEILING = QUICK ? 500 : 1500;
const SHED_SECONDS = QUICK ? 6 : 20;
const partsAt = process.argv.indexOf('--parts');
const PARTS = new Set((partsAt >= 0 ? (process.argv[partsAt + 1] ?? '') : '1,2,3').split(',').map(Number));

interface Run {
  readonly name: string;
  readonly cpuUsPerKeepalive: number;
  readonly ok: number;
  readonly failed: number;
}

const sippKeys = { gb_server: SERVER_ID, gb_domain: SERVER_ID.slice(0, 10) };

/** A SIPp keepalive run to `port` (warm-up first, not measured); CPU per keepalive of each pid in `measured`. */
async function drive(port: number, inject: string, measured: readonly { name: string; pid: number }[], localPort?: number, onStart?: () => Promise<void>): Promise<Run[]> {
  const lp = localPort ?? (await freePort({ udp: true }));
  await runSipp({ scenario: SCENARIO, remote: `127.0.0.1:${port}`, localPort: lp, calls: Math.min(2000, CALLS / 5), rate: RATE, injectionFiles: [inject], keys: sippKeys, traceMessages: false, timeoutMs: 120_000 }).done;
  await onStart?.();
  const before = measured.map((m) => cpuTicks(m.pid));
  const r = await runSipp({ scenario: SCENARIO, remote: `127.0.0.1:${port}`, localPort: lp, calls: CALLS, rate: RATE, injectionFiles: [inject], keys: sippKeys, traceMessages: false, timeoutMs: 300_000 }).done;
  const ok = r.stats?.successful ?? 0;
  const failed = r.stats?.failed ?? 0;
  return measured.map((m, i) => ({ name: m.name, cpuUsPerKeepalive: ok > 0 ? ((cpuTicks(m.pid) - (before[i] as number)) * TICK_US) / ok : NaN, ok, failed }));
}

/** One command to edge-child.ts's bench control; its answer. */
const command = (proc: ManagedProcess, text: string): Promise<string> => edgeControl(Number(/edge control (\d+)/.exec(proc.output())?.[1]), text, 10_000);

function startEdge(port: number, backends: readonly string[], env: Record<string, string> = {}): ManagedProcess {
  return spawnManaged(process.execPath, tsxArgs(join(HERE, 'edge', 'edge-child.ts'), String(port), ...backends), { name: 'sip-edge', env: { ...process.env, ...env } });
}

interface Shedding {
  readonly sent: number;
  readonly ok: number;
  readonly shed: number;
  readonly shedWithoutRetryAfter: number;
  readonly unanswered: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Datagrams the kernel dropped at the edge's socket and at the driver's (receive buffer full). */
  readonly edgeDrops: number;
  readonly driverDrops: number;
}

/** The `drops` column of /proc/net/udp for the socket bound to 127.0.0.1:port. */
function udpDrops(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const line = readFileSync('/proc/net/udp', 'utf8').split('\n').find((l) => l.trim().split(/\s+/)[1] === local);
  return Number(line?.trim().split(/\s+/).at(-1) ?? NaN);
}

/** A probe's answers: sent, answered (within 2 s), status counts, latency p50/p99/max. */
interface Probe {
  sent: number;
  answered: number;
  readonly statuses: Map<number, number>;
  readonly latencies: number[];
}
const newProbe = (): Probe => ({ sent: 0, answered: 0, statuses: new Map(), latencies: [] });
function answered(p: Probe, status: number, ms: number): void {
  p.answered++;
  p.statuses.set(status, (p.statuses.get(status) ?? 0) + 1);
  p.latencies.push(ms);
}
function probeText(name: string, p: Probe): string {
  const l = [...p.latencies].sort((a, b) => a - b);
  const q = (f: number): string => (l.length === 0 ? '-' : (l[Math.min(l.length - 1, Math.floor(f * l.length))] as number).toFixed(2));
  const statuses = [...p.statuses].map(([st, n]) => `${n} × ${st}`).join(', ');
  return `${name}: ${p.answered}/${p.sent} answered (${statuses}), p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${l.length === 0 ? '-' : (l.at(-1) as number).toFixed(2)} ms`;
}

/** Every 100 ms while running: an OPTIONS to the edge's SIP port from its own socket, and GET /metrics. */
async function startProbes(sipPort: number, metricsPort: number): Promise<{ stop: () => Promise<{ options: Probe; metrics: Probe }> }> {
  const options = newProbe();
  const metrics = newProbe();
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const localPort = sock.address().port;
  const pending = new Map<string, number>();
  sock.on('message', (d) => {
    const text = d.toString('latin1');
    const callId = /\r\nCall-ID: ([^\r]+)/.exec(text)?.[1] ?? '';
    const t0 = pending.get(callId);
    if (t0 === undefined) return;
    pending.delete(callId);
    answered(options, Number(text.slice(8, 11)), performance.now() - t0);
  });
  let n = 0;
  const inFlight = new Set<Promise<void>>();
  const tick = setInterval(() => {
    const callId = `probe${n}-${process.pid}@127.0.0.1`;
    const msg = [
      `OPTIONS sip:${SERVER_ID}@127.0.0.1:${sipPort} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${localPort};rport;branch=z9hG4bK-probe${process.pid}-${n}`,
      `From: <sip:health@127.0.0.1>;tag=p${n}`,
      `To: <sip:${SERVER_ID}@127.0.0.1>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 OPTIONS',
      'Max-Forwards: 70',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    n++;
    options.sent++;
    pending.set(callId, performance.now());
    sock.send(msg, sipPort, '127.0.0.1');
    if (metricsPort > 0) {
      metrics.sent++;
      const t0 = performance.now();
      const done = new Promise<void>((resolve) => {
        const req = request({ host: '127.0.0.1', port: metricsPort, path: '/metrics', timeout: 2000, agent: false }, (res) => {
          res.resume();
          res.on('end', () => {
            answered(metrics, res.statusCode ?? 0, performance.now() - t0);
            resolve();
          });
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve());
        req.end();
      });
      inFlight.add(done);
      void done.then(() => inFlight.delete(done));
    }
  }, 100);
  return {
    stop: async () => {
      clearInterval(tick);
      await Promise.all(inFlight);
      await new Promise((r) => setTimeout(r, 2000)); // the last OPTIONS answers
      sock.close();
      return { options, metrics };
    },
  };
}

/** Part 3: `rate` keepalives per second for `seconds` (open loop, 1 ms ticks), every answer timed. */
async function offer(port: number, rate: number, seconds: number): Promise<Shedding> {
  const sock = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 }); // the driver must not be where answers are lost
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const localPort = sock.address().port;
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let ok = 0;
  let shed = 0;
  let shedWithoutRetryAfter = 0;
  sock.on('message', (d) => {
    const text = d.toString('latin1');
    const callId = /\r\nCall-ID: ([^\r]+)/.exec(text)?.[1] ?? '';
    const t0 = sentAt.get(callId);
    if (t0 === undefined) return; // a duplicate
    sentAt.delete(callId);
    latencies.push(performance.now() - t0);
    if (text.startsWith('SIP/2.0 200 ')) ok++;
    else if (text.startsWith('SIP/2.0 503 ')) {
      shed++;
      if (!/\r\nRetry-After: \d+/.test(text)) shedWithoutRetryAfter++;
    }
  });
  const edgeDrops0 = udpDrops(port);
  const start = performance.now();
  let k = 0;
  const total = rate * seconds;
  await new Promise<void>((done) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000));
      for (; k < due; k++) {
        const m = keepalive(k, deviceIdOf(k % DEVICES), localPort, 's');
        sentAt.set(`s${k}-${process.pid}@127.0.0.1`, performance.now());
        sock.send(m, port, '127.0.0.1');
      }
      if (k >= total) {
        clearInterval(tick);
        done();
      }
    }, 1);
  });
  await new Promise((r) => setTimeout(r, 1000)); // the last answers
  const driverDrops = udpDrops(localPort);
  sock.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { sent: total, ok, shed, shedWithoutRetryAfter, unanswered: sentAt.size, p50Ms: q(0.5), p99Ms: q(0.99), edgeDrops: udpDrops(port) - edgeDrops0, driverDrops };
}

async function main(): Promise<void> {
  const dir = tmpDir('vms-bench-edge-');
  const backends = [await freePort({ udp: true }), await freePort({ udp: true }), await freePort({ udp: true })];
  const backendTargets = backends.map((p) => `127.0.0.1:${p}`);
  const dispatcherPort = await freePort({ udp: true });
  const list = join(dir.path, 'dispatcher.list');
  writeFileSync(list, backends.map((p) => `1 sip:127.0.0.1:${p}\n`).join(''));
  const ids = (from: number, n: number): string => writeInjectionCsv(Array.from({ length: n }, (_, i) => [deviceIdOf(from + i), 'x']));
  const inject = ids(0, DEVICES);
  const started: ManagedProcess[] = [];
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  try {
    started.push(await startKamailio(join(HERE, 'edge', 'backend.cfg'), backends.map((p, i) => `BACKEND_${'ABC'[i]}=udp:127.0.0.1:${p}`), backends[2] as number));
    const figures: string[] = [];
    let met = true;
    if (PARTS.has(1)) {
      // 1. edge vs Kamailio, same backend, same keepalives
      const dispatcher = await startKamailio(join(HERE, 'edge', 'dispatcher.cfg'), [`BENCH_LISTEN=udp:127.0.0.1:${dispatcherPort}`, `DS_LIST="${list}"`], dispatcherPort);
      started.push(dispatcher);
      const edgePort = await freePort({ udp: true });
      const edge = startEdge(edgePort, backendTargets);
      started.push(edge);
      await edge.waitForOutput(/edge listening/, 60_000);
      const [kam] = (await drive(dispatcherPort, inject, [{ name: 'kamailio dispatcher', pid: dispatcher.pid as number }])) as [Run];
      const [ours] = (await drive(edgePort, inject, [{ name: 'sip-edge', pid: edge.pid as number }], undefined, async () => void (await command(edge, 'reset')))) as [Run];
      const gc = JSON.parse(await command(edge, 'tally')) as { minor: number; major: number; incremental: number; ms: number };
      for (const r of [kam, ours]) out(`${r.name.padEnd(20)} ${r.cpuUsPerKeepalive.toFixed(1).padStart(7)} µs CPU per forwarded keepalive  (${r.ok} ok, ${r.failed} failed, ${RATE}/s)`);
      out(`  the edge's collections over those ${ours.ok} keepalives: ${gc.minor} scavenge, ${gc.major} mark-compact, ${gc.incremental} incremental marking; ${gc.ms.toFixed(0)} ms of wall time in them (${((gc.ms * 1000) / Math.max(1, ours.ok)).toFixed(1)} µs per keepalive: wall time, an upper bound of their CPU on a busy machine)`);
      const ratio = ours.cpuUsPerKeepalive / kam.cpuUsPerKeepalive;
      out(`ratio edge / kamailio: ${ratio.toFixed(2)}×`);
      figures.push(`edge ${ours.cpuUsPerKeepalive.toFixed(1)} µs, kamailio ${kam.cpuUsPerKeepalive.toFixed(1)} µs, ${ratio.toFixed(2)}×${ours.failed + kam.failed > 0 ? ` (failed ${ours.failed}/${kam.failed})` : ''}; edge GC ${gc.minor} scavenge + ${gc.major} mark-compact`);
      met &&= ratio <= 2 && ours.failed === 0;
    }

    if (PARTS.has(2)) {
      // 2. the shard's CPU per keepalive, direct and through the edge
      const directPort = await freePort({ udp: true });
      const behindPort = await freePort({ udp: true });
      const shardEdgePort = await freePort({ udp: true });
      const shard = spawnManaged(process.execPath, tsxArgs(join(HERE, 'edge', 'shard-child.ts'), String(2 * DEVICES), String(directPort), String(shardEdgePort), String(behindPort)), { name: 'shard' });
      started.push(shard);
      const shardPort = Number(/READY (\d+)/.exec(await shard.waitForOutput(/READY \d+/, 120_000))?.[1]);
      const shardEdge = startEdge(shardEdgePort, [`127.0.0.1:${shardPort}`]);
      started.push(shardEdge);
      await shardEdge.waitForOutput(/edge listening/, 60_000);
      const [direct] = (await drive(shardPort, ids(0, DEVICES), [{ name: 'shard, direct', pid: shard.pid as number }], directPort)) as [Run];
      const [behind, edgeToShard] = (await drive(shardEdgePort, ids(DEVICES, DEVICES), [{ name: 'shard, through edge', pid: shard.pid as number }, { name: 'sip-edge → shard', pid: shardEdge.pid as number }], behindPort)) as [Run, Run];
      for (const r of [direct, behind, edgeToShard]) out(`${r.name.padEnd(20)} ${r.cpuUsPerKeepalive.toFixed(1).padStart(7)} µs CPU per keepalive  (${r.ok} ok, ${r.failed} failed, ${RATE}/s)`);
      const shardRatio = behind.cpuUsPerKeepalive / direct.cpuUsPerKeepalive;
      out(`shard through edge / direct: ${shardRatio.toFixed(2)}×`);
      figures.push(`shard ${behind.cpuUsPerKeepalive.toFixed(1)} µs through edge vs ${direct.cpuUsPerKeepalive.toFixed(1)} direct (${shardRatio.toFixed(2)}×)${behind.failed + direct.failed > 0 ? ` (failed ${behind.failed}/${direct.failed})` : ''}`);
      met &&= behind.failed === 0 && direct.failed === 0;
    }

    if (PARTS.has(3)) {
      // 3. past the ceiling
      const shedPort = await freePort({ udp: true });
      const shedEdge = startEdge(shedPort, backendTargets, { VMS_BENCH_EDGE_CEILING: String(CEILING), VMS_BENCH_EDGE_METRICS: '1' });
      started.push(shedEdge);
      await shedEdge.waitForOutput(/edge listening/, 60_000);
      const metricsPort = Number(/edge metrics (\d+)/.exec(shedEdge.output())?.[1]);
      await offer(shedPort, CEILING / 2, 2); // warm-up
      await new Promise((r) => setTimeout(r, 1100)); // the bucket full again
      // the same machine under the ceiling, for reference: the latency the load alone gives
      const underProbes = await startProbes(shedPort, metricsPort);
      const under = await offer(shedPort, CEILING / 2, SHED_SECONDS / 2);
      const underProbed = await underProbes.stop();
      out(`under the ceiling (${CEILING / 2}/s): ${under.ok} × 200, ${under.unanswered} unanswered; answers p50 ${under.p50Ms.toFixed(2)} ms, p99 ${under.p99Ms.toFixed(2)} ms`);
      out(`  probes ${probeText('OPTIONS', underProbed.options)}; ${probeText('GET /metrics', underProbed.metrics)}`);
      await new Promise((r) => setTimeout(r, 1100));
      const overProbes = await startProbes(shedPort, metricsPort);
      const s = await offer(shedPort, 2 * CEILING, SHED_SECONDS);
      const probed = await overProbes.stop();
      out(`ceiling ${CEILING}/s offered ${2 * CEILING}/s for ${SHED_SECONDS} s: ${s.ok} × 200, ${s.shed} × 503 (${s.shedWithoutRetryAfter} without Retry-After), ${s.unanswered} unanswered of ${s.sent}; answers p50 ${s.p50Ms.toFixed(2)} ms, p99 ${s.p99Ms.toFixed(2)} ms; kernel drops: ${s.edgeDrops} at the edge, ${s.driverDrops} at the driver`);
      out(`  probes ${probeText('OPTIONS', probed.options)}; ${probeText('GET /metrics', probed.metrics)}`);
      await shedEdge.stop({ timeoutMs: 3000 });
      out(`  ${/edge stats .*/.exec(shedEdge.output())?.[0] ?? 'edge stats not printed'}`);
      const p99 = (p: Probe): string => {
        const l = [...p.latencies].sort((a, b) => a - b);
        return l.length === 0 ? '-' : (l[Math.min(l.length - 1, Math.floor(0.99 * l.length))] as number).toFixed(1);
      };
      figures.push(
        `2× the ceiling: ${s.ok} × 200, ${s.shed} × 503, ${s.unanswered} unanswered, p99 ${s.p99Ms.toFixed(1)} ms (under it ${under.p99Ms.toFixed(1)} ms); probes answered OPTIONS ${probed.options.answered}/${probed.options.sent} p99 ${p99(probed.options)} ms, /metrics ${probed.metrics.answered}/${probed.metrics.sent} p99 ${p99(probed.metrics)} ms`,
      );
      met &&= s.shed > 0 && s.shedWithoutRetryAfter === 0 && s.unanswered <= s.sent * 0.001 && probed.options.answered === probed.options.sent && probed.metrics.answered === probed.metrics.sent;
    }

    printSummary({
      bench: 'edge',
      what: `SIP edge vs Kamailio dispatcher CPU per forwarded keepalive (${RATE}/s); shard CPU through edge vs direct; ${2 * CEILING}/s offered past a ${CEILING}/s ceiling${QUICK ? ', quick' : ''}`,
      figures: figures.join('; '),
      target: 'edge ≤ 2× Kamailio; past the ceiling 503 + Retry-After, nothing lost, every probe answered',
      met,
    });
  } finally {
    for (const p of started.reverse()) await p.stop({ timeoutMs: 3000 });
  }
}

await main();
