// Issue 14, load-independent: instructions per forwarded keepalive of the SIP edge and of Kamailio 5.6 as a
// stateless dispatcher (bench/edge/dispatcher.cfg, hash over the device code), counted with callgrind in
// the same run. The wall-clock bench (edge.ts) reads CPU time from /proc, which moves with whatever else
// shares the machine; instruction counts do not.
//   npx tsx test/bench/edge-callgrind.ts [--quick] [--warmup W] [--count M] [--keep] [--perf-map]
//
//  1. a backend (bench/edge/backend.cfg: Kamailio answering 200 statelessly, not counted);
//  2. Kamailio under `valgrind --tool=callgrind --instr-atstart=no` serving from its main process (`fork=no`
//     and `-D`: callgrind_control reaches only the process valgrind started, not forked children; the few
//     helpers Kamailio still forks stay uninstrumented, and do no per-message work), then
//     the edge (bench/edge/edge-child.ts, node + tsx) the same way;
//  3. for each: W keepalives (1,000 devices) to warm it up, one at a time, each answered before the next;
//     counters zeroed, instrumentation on, M more, off, dumped. A forwarded keepalive = the MESSAGE to the
//     backend and its 200 back to the device; everything the proxy does meanwhile is billed (for node:
//     all threads, GC and JIT included).
// --keep keeps the callgrind files (callgrind_annotate); --perf-map runs node with --perf-basic-prof, whose
// /tmp/perf-<pid>.map names the JIT addresses callgrind_annotate shows as `???:0x…`.
import dgram from 'node:dgram';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, spawnManaged, tsxArgs, type ManagedProcess } from '@vms/harness';
import { deviceIdOf, keepalive, startKamailio } from './edge/procs.ts';
import { isQuick, printSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const QUICK = isQuick();
const DEVICES = 1000;
function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1] ?? fallback) : fallback;
}
const WARMUP = arg('warmup', QUICK ? 3000 : 20_000);
const COUNT = arg('count', QUICK ? 1000 : 5000);
const KEEP = process.argv.includes('--keep');
const PERF_MAP = process.argv.includes('--perf-map');

/** Keepalives first..first+n-1 one at a time through the proxy (resent after 2 s unanswered); the non-200 count. */
async function drive(port: number, first: number, n: number): Promise<number> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const localPort = sock.address().port;
  let k = first;
  let bad = 0;
  await new Promise<void>((done) => {
    let timer: NodeJS.Timeout | undefined;
    const next = (): void => {
      clearTimeout(timer);
      if (k >= first + n) {
        done();
        return;
      }
      const m = keepalive(k, deviceIdOf(k % DEVICES), localPort);
      sock.send(m, port, '127.0.0.1');
      timer = setTimeout(() => sock.send(m, port, '127.0.0.1'), 2000);
    };
    sock.on('message', (d) => {
      if (!d.toString('latin1', 0, 12).startsWith('SIP/2.0 200 ')) bad++;
      k++;
      next();
    });
    next();
  });
  sock.close();
  return bad;
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0 || /not detected/.test(r.stderr + r.stdout)) throw new Error(`callgrind_control ${args.join(' ')} ${pid} failed: ${r.stderr}${r.stdout}`);
}

interface Count {
  readonly name: string;
  readonly perKeepalive: number;
  readonly bad: number;
  readonly file: string;
}

/** Warm-up, then the counted window, of the proxy `proc` (under callgrind, out files `dir/prefix.*`). */
async function measure(name: string, proc: ManagedProcess, port: number, dir: string, prefix: string): Promise<Count> {
  const pid = proc.pid as number;
  let bad = 0;
  try {
    bad += await drive(port, 0, WARMUP);
    control(pid, '-z');
    control(pid, '-i', 'on');
    bad += await drive(port, WARMUP, COUNT);
    control(pid, '-i', 'off');
    control(pid, '-d');
  } finally {
    await proc.stop({ timeoutMs: 10_000 });
  }
  let instructions = 0;
  let file = '';
  for (const f of readdirSync(dir).filter((n) => n.startsWith(prefix))) {
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
    const v = m === null ? 0 : Number(m[1]);
    if (v > instructions) {
      instructions = v;
      file = join(dir, f);
    }
  }
  return { name, perKeepalive: instructions / COUNT, bad, file };
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind not installed (npm run setup -- --bench)');
  const dir = mkdtempSync(join(tmpdir(), 'edge-callgrind-'));
  const started: ManagedProcess[] = [];
  try {
    const backends = [await freePort({ udp: true }), await freePort({ udp: true }), await freePort({ udp: true })];
    const list = join(dir, 'dispatcher.list');
    writeFileSync(list, backends.map((p) => `1 sip:127.0.0.1:${p}\n`).join(''));
    started.push(await startKamailio(join(HERE, 'edge', 'backend.cfg'), backends.map((p, i) => `BACKEND_${'ABC'[i]}=udp:127.0.0.1:${p}`), backends[2] as number));
    process.stdout.write(`callgrind: ${DEVICES} devices, ${WARMUP} warm-up keepalives, ${COUNT} counted\n`);

    const cg = (prefix: string): string[] => ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, prefix)}.%p`];
    const kamPort = await freePort({ udp: true });
    const kam = await startKamailio(join(HERE, 'edge', 'dispatcher.cfg'), ['BENCH_NOFORK', `BENCH_LISTEN=udp:127.0.0.1:${kamPort}`, `DS_LIST="${list}"`], kamPort, { wrap: cg('kam'), waitMs: 120_000, single: true });
    started.push(kam);
    const kamCount = await measure('kamailio dispatcher', kam, kamPort, dir, 'kam.');

    const edgePort = await freePort({ udp: true });
    const [vg, ...vgArgs] = cg('edge');
    const edge = spawnManaged(vg as string, [...vgArgs, process.execPath, ...(PERF_MAP ? ['--perf-basic-prof'] : []), ...tsxArgs(join(HERE, 'edge', 'edge-child.ts'), String(edgePort), ...backends.map((p) => `127.0.0.1:${p}`))], { name: 'sip-edge (callgrind)' });
    started.push(edge);
    await edge.waitForOutput(/edge listening/, 600_000);
    const edgeCount = await measure('sip-edge', edge, edgePort, dir, 'edge.');

    const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
    for (const c of [kamCount, edgeCount]) process.stdout.write(`${c.name.padEnd(20)} ${fmt(c.perKeepalive).padStart(9)} instructions per forwarded keepalive${c.bad > 0 ? ` (${c.bad} not 200)` : ''}\n`);
    const ratio = edgeCount.perKeepalive / kamCount.perKeepalive;
    process.stdout.write(`ratio edge / kamailio: ${ratio.toFixed(2)}×\n`);
    if (KEEP) process.stdout.write(`callgrind files kept: ${kamCount.file} ${edgeCount.file}\n`);
    if (PERF_MAP) process.stdout.write(`JIT code map: /tmp/perf-${edge.pid}.map\n`);
    printSummary({
      bench: 'edge-callgrind',
      what: `instructions per keepalive forwarded, SIP edge vs Kamailio dispatcher (${WARMUP.toLocaleString('en-US')} warm-up, ${COUNT.toLocaleString('en-US')} counted)`,
      figures: `edge ${fmt(edgeCount.perKeepalive)}, kamailio ${fmt(kamCount.perKeepalive)}, ${ratio.toFixed(2)}×${kamCount.bad + edgeCount.bad > 0 ? `; ${kamCount.bad + edgeCount.bad} not 200` : ''}`,
      target: 'edge ≤ 2× Kamailio',
      met: ratio <= 2 && kamCount.bad + edgeCount.bad === 0,
    });
  } finally {
    for (const p of started.reverse()) await p.stop({ timeoutMs: 5000 });
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
