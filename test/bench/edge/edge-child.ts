// test/bench/edge.ts's and edge-callgrind.ts's edge process: the SIP edge on 127.0.0.1 with a fixed list of
// shards (the bench's backends), so its CPU is measured from /proc (or callgrind) like Kamailio's.
// argv: port, then host:port per shard. VMS_BENCH_EDGE_CEILING: the edge's requests per second (default: out
// of the way); VMS_BENCH_EDGE_MODULE: another build of the edge to measure (a path to its src/index.ts; to
// compare with an earlier commit); VMS_BENCH_EDGE_METRICS=1: also the edge's GET /metrics (as main.ts
// serves it), its port printed as `edge metrics <port>`.
//
// The bench's control (bench-only: this file, never the service): a UDP socket on 127.0.0.1, port printed as
// `edge control <port>`, one command per datagram, one answer each:
//   `gc`    a full collection now (node started with --expose-gc by the bench, else `error …`), then the GC
//           tally zeroed: the counted window starts from the same heap every run;
//   `reset` the GC tally zeroed, no collection (edge.ts: the collections of a run at full speed);
//   `tally` the collections since (perf_hooks `gc` entries, all of them: kinds and milliseconds), as JSON.
import dgram from 'node:dgram';
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

const control = dgram.createSocket('udp4');
control.on('message', (d, r) => {
  const command = d.toString('latin1').trim();
  let answer: string;
  if (command === 'gc') {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc === undefined) answer = 'error node without --expose-gc';
    else {
      gc();
      // the collection's own perf entry is delivered asynchronously: zero once it is surely in
      setTimeout(() => {
        tally = zero();
        control.send('ok', r.port, r.address);
      }, 100);
      return;
    }
  } else if (command === 'reset') {
    tally = zero();
    answer = 'ok';
  } else if (command === 'tally') answer = JSON.stringify(tally);
  else answer = `error unknown command ${JSON.stringify(command.slice(0, 20))}`;
  control.send(answer, r.port, r.address);
});
await new Promise<void>((r) => control.bind(0, '127.0.0.1', () => r()));
process.stdout.write(`edge control ${control.address().port}\n`);

const metrics = process.env['VMS_BENCH_EDGE_METRICS'] === '1' ? await startMetricsServer(createEdgeMetrics({ counters: edge.counters, shards: shardSource, links: edge.links }), { host: '127.0.0.1', port: 0 }) : null;
if (metrics !== null) process.stdout.write(`edge metrics ${metrics.port}\n`);
process.stdout.write(`edge listening ${edge.port}\n`);
process.on('SIGTERM', () => {
  process.stdout.write(`edge stats ${JSON.stringify(edge.stats())}\n`);
  gcObserver.disconnect();
  control.close();
  void Promise.all([edge.close(), metrics?.close()]).then(() => process.exit(0));
});
