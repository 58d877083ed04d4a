// test/bench/edge.ts's and edge-callgrind.ts's edge process: the SIP edge on 127.0.0.1 with a fixed list of
// shards (the bench's backends), so its CPU is measured from /proc (or callgrind) like Kamailio's.
// argv: port, then host:port per shard. VMS_BENCH_EDGE_CEILING: the edge's requests per second (default: out
// of the way); VMS_BENCH_EDGE_MODULE: another build of the edge to measure (a path to its src/index.ts; to
// compare with an earlier commit); VMS_BENCH_EDGE_METRICS=1: also the edge's GET /metrics (as main.ts
// serves it), its port printed as `edge metrics <port>`.
//
// The bench's control (bench-only: this file, never the service): TCP on 127.0.0.1, port printed as
// `edge control <port>`, one command line per connection, answered with one line:
//   `gc`    a full collection now (node started with --expose-gc by the bench, else `error …`), then the GC
//           tally zeroed: the counted window starts from the same heap every run;
//   `reset` the GC tally zeroed, no collection (edge.ts: the collections of a run at full speed);
//   `tally` the collections since (perf_hooks `gc` entries, all of them: kinds and milliseconds), as JSON.
import { createServer, type AddressInfo } from 'node:net';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { silentLogger } from '@vms/sip';
import type * as EdgeModule from '@vms/sip-edge';

const { createEdgeMetrics, createStaticShardSource, startEdge, startMetricsServer } = (await import(process.env['VMS_BENCH_EDGE_MODULE'] ?? '@vms/sip-edge')) as typeof EdgeModule;

const [portText, ...backends] = process.argv.slice(2);
const shards = backends.map((b, i) => {
  const [host = '127.0.0.1', port = '0'] = b.split(':');
  return { code: `shard-${i}`, sipHost: host, sipPort: Number(port), group: 'default', online: true, draining: false };
});
const shardSource = createStaticShardSource(shards);
const edge = await startEdge({
  code: 'edge-bench',
  bindHost: '127.0.0.1',
  host: '127.0.0.1',
  port: Number(portText),
  transports: ['udp'],
  flowSecret: Buffer.alloc(32, 5),
  shards: shardSource,
  // the bench offers one source address at thousands per second: the per-address bound would shed it
  perAddressRequestsPerSec: 10_000_000,
  maxRequestsPerSec: Number(process.env['VMS_BENCH_EDGE_CEILING'] ?? 10_000_000),
  log: silentLogger,
});

/** Collections since the last `gc` command, by kind (perf_hooks' NODE_PERFORMANCE_GC_* flags). */
interface GcTally {
  minor: number;
  major: number;
  incremental: number;
  weak: number;
  ms: number;
}
const zero = (): GcTally => ({ minor: 0, major: 0, incremental: 0, weak: 0, ms: 0 });
let tally = zero();
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = ((e as { detail?: { kind?: number } }).detail)?.kind ?? 0;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) tally.minor++;
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) tally.major++;
    else if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) tally.incremental++;
    else tally.weak++;
    tally.ms += e.duration;
  }
});
gcObserver.observe({ entryTypes: ['gc'] });

/** A control command's answer (the `gc` one once its collection's entry is in). */
async function answer(command: string): Promise<string> {
  if (command === 'gc') {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc === undefined) return 'error node without --expose-gc';
    gc();
    // the collection's own perf entry is delivered asynchronously: zero once it is surely in
    await new Promise((r) => setTimeout(r, 100));
    tally = zero();
    return 'ok';
  }
  if (command === 'reset') {
    tally = zero();
    return 'ok';
  }
  if (command === 'tally') return JSON.stringify(tally);
  return `error unknown command ${JSON.stringify(command.slice(0, 20))}`;
}
// TCP, not UDP: the edge's forwarding runs dgram's Socket.send with its own argument shapes; a control
// socket answering strings through the same function made V8 deoptimize it ("wrong map") mid-window
// allowHalfOpen: the client ends its side with the command; the answer (after a collection) still goes out
const control = createServer({ allowHalfOpen: true }, (conn) => {
  let text = '';
  conn.setEncoding('latin1');
  conn.on('data', (d: string) => {
    text += d;
    if (!text.includes('\n') || text.length > 100) return;
    void answer(text.trim()).then((a) => conn.end(`${a}\n`));
  });
  conn.on('error', () => conn.destroy());
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));
process.stdout.write(`edge control ${(control.address() as AddressInfo).port}\n`);

const metrics = process.env['VMS_BENCH_EDGE_METRICS'] === '1' ? await startMetricsServer(createEdgeMetrics({ counters: edge.counters, shards: shardSource, links: edge.links }), { host: '127.0.0.1', port: 0 }) : null;
if (metrics !== null) process.stdout.write(`edge metrics ${metrics.port}\n`);
process.stdout.write(`edge listening ${edge.port}\n`);
process.on('SIGTERM', () => {
  process.stdout.write(`edge stats ${JSON.stringify(edge.stats())}\n`);
  gcObserver.disconnect();
  control.close();
  void Promise.all([edge.close(), metrics?.close()]).then(() => process.exit(0));
});
