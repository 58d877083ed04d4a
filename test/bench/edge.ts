// Issue 14: CPU of the SIP edge per forwarded keepalive, beside Kamailio 5.6 as a stateless dispatcher
// (bench/edge/dispatcher.cfg: ds_select_dst algorithm 7 = hash over the From user, i.e. the device code;
// `-x fm`, the memory manager this Debian build is fastest with) forwarding the same SIPp keepalives
// (sipp/edge/keepalive.xml, device ids from an injection file) to the same backend (one Kamailio answering
// 200 on three ports, the "shards"), one after the other in the same run. CPU is read from /proc (utime +
// stime of the proxy's processes, Kamailio's children included) around each run; a keepalive forwarded =
// the request to the backend and its 200 back. Prints both, and the ratio (target: edge ≤ 2× Kamailio).
//   npx tsx test/bench/edge.ts [--quick]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, requireBinary, runSipp, spawnManaged, tmpDir, tsxArgs, writeInjectionCsv, type ManagedProcess } from '@vms/harness';
import { isQuick, printSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCENARIO = join(HERE, '..', 'sipp', 'edge', 'keepalive.xml');
const QUICK = isQuick();
const RATE = QUICK ? 1000 : 3000;
const CALLS = QUICK ? 10_000 : 90_000;
const DEVICES = 1000;
const SERVER_ID = '34020000002000000001';
const TICK_US = 1_000_000 / 100; // USER_HZ = 100 on Linux

function ticksOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').slice(readFileSync(`/proc/${pid}/stat`, 'utf8').lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
  } catch {
    return 0;
  }
}

/** The process and its descendants (Kamailio forks its workers). */
function treeOf(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const children = readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8').trim();
      if (children !== '') out.push(...children.split(/\s+/).map(Number));
    } catch {
      // gone
    }
  }
  return out;
}

const cpuTicks = (pid: number): number => treeOf(pid).reduce((s, p) => s + ticksOf(p), 0);

async function kamailio(cfg: string, defines: readonly string[], port: number): Promise<ManagedProcess> {
  const bin = requireBinary('kamailio', 'kamailio');
  const run = tmpDir('vms-bench-kam-');
  const proc = spawnManaged(bin, ['-f', cfg, '-DD', '-E', '-m', '64', '-M', '8', '-n', '2', '-x', 'fm', '-P', join(run.path, 'kam.pid'), ...defines.flatMap((d) => ['-A', d])], { name: 'kamailio' });
  for (let i = 0; i < 100; i++) {
    if (readFileSync('/proc/net/udp', 'utf8').includes(`:${port.toString(16).toUpperCase().padStart(4, '0')} `)) return proc;
    if (!proc.isRunning()) throw new Error(`kamailio failed to start: ${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`kamailio did not bind ${port}: ${proc.output()}`);
}

interface Run {
  readonly name: string;
  readonly cpuUsPerKeepalive: number;
  readonly ok: number;
  readonly failed: number;
}

async function drive(name: string, proxyPid: number, proxyPort: number, inject: string): Promise<Run> {
  // warm-up (JIT, socket buffers), not measured
  await runSipp({ scenario: SCENARIO, remote: `127.0.0.1:${proxyPort}`, localPort: await freePort({ udp: true }), calls: Math.min(2000, CALLS / 5), rate: RATE, injectionFiles: [inject], keys: { gb_server: SERVER_ID, gb_domain: SERVER_ID.slice(0, 10) }, traceMessages: false, timeoutMs: 120_000 }).done;
  const before = cpuTicks(proxyPid);
  const r = await runSipp({ scenario: SCENARIO, remote: `127.0.0.1:${proxyPort}`, localPort: await freePort({ udp: true }), calls: CALLS, rate: RATE, injectionFiles: [inject], keys: { gb_server: SERVER_ID, gb_domain: SERVER_ID.slice(0, 10) }, traceMessages: false, timeoutMs: 300_000 }).done;
  const ticks = cpuTicks(proxyPid) - before;
  const ok = r.stats?.successful ?? 0;
  const failed = r.stats?.failed ?? 0;
  return { name, cpuUsPerKeepalive: ok > 0 ? (ticks * TICK_US) / ok : NaN, ok, failed };
}

async function main(): Promise<void> {
  const dir = tmpDir('vms-bench-edge-');
  const backends = [await freePort({ udp: true }), await freePort({ udp: true }), await freePort({ udp: true })];
  const dispatcherPort = await freePort({ udp: true });
  const edgePort = await freePort({ udp: true });
  const list = join(dir.path, 'dispatcher.list');
  writeFileSync(list, backends.map((p) => `1 sip:127.0.0.1:${p}\n`).join(''));
  const inject = writeInjectionCsv(Array.from({ length: DEVICES }, (_, i) => [`3402000000132${String(i).padStart(7, '0')}`, 'x']));
  const started: ManagedProcess[] = [];
  try {
    started.push(await kamailio(join(HERE, 'edge', 'backend.cfg'), backends.flatMap((p, i) => [`BACKEND_${'ABC'[i]}=udp:127.0.0.1:${p}`]), backends[2]!));
    const dispatcher = await kamailio(join(HERE, 'edge', 'dispatcher.cfg'), [`BENCH_LISTEN=udp:127.0.0.1:${dispatcherPort}`, `DS_LIST="${list}"`], dispatcherPort);
    started.push(dispatcher);
    const edge = spawnManaged(process.execPath, tsxArgs(join(HERE, 'edge', 'edge-child.ts'), String(edgePort), ...backends.map((p) => `127.0.0.1:${p}`)), { name: 'sip-edge' });
    started.push(edge);
    await edge.waitForOutput(/edge listening/, 60_000);

    const kam = await drive('kamailio dispatcher', dispatcher.pid!, dispatcherPort, inject);
    const ours = await drive('sip-edge', edge.pid!, edgePort, inject);
    for (const r of [kam, ours]) process.stdout.write(`${r.name.padEnd(20)} ${r.cpuUsPerKeepalive.toFixed(1).padStart(7)} µs CPU per forwarded keepalive  (${r.ok} ok, ${r.failed} failed, ${RATE}/s)\n`);
    const ratio = ours.cpuUsPerKeepalive / kam.cpuUsPerKeepalive;
    process.stdout.write(`ratio edge / kamailio: ${ratio.toFixed(2)}×\n`);
    printSummary({
      bench: 'edge',
      what: `CPU per keepalive forwarded by the SIP edge vs Kamailio dispatcher (hash on device code), ${RATE}/s${QUICK ? ', quick' : ''}`,
      figures: `edge ${ours.cpuUsPerKeepalive.toFixed(1)} µs, kamailio ${kam.cpuUsPerKeepalive.toFixed(1)} µs, ${ratio.toFixed(2)}×; failed ${ours.failed}/${kam.failed}`,
      target: 'edge ≤ 2× Kamailio',
      met: ratio <= 2 && ours.failed === 0,
    });
  } finally {
    for (const p of started.reverse()) await p.stop({ timeoutMs: 3000 });
  }
}

await main();
