// test/bench/edge.ts's edge process: the SIP edge on 127.0.0.1 with a fixed list of shards (the bench's
// backends), so its CPU is measured from /proc like Kamailio's. argv: port, then host:port per shard.
// VMS_BENCH_EDGE_CEILING: the edge's requests per second (default: out of the way); VMS_BENCH_EDGE_MODULE:
// another build of the edge to measure (a path to its src/index.ts; to compare with an earlier commit).
import { silentLogger } from '@vms/sip';
import type * as EdgeModule from '@vms/sip-edge';

const { createStaticShardSource, startEdge } = (await import(process.env['VMS_BENCH_EDGE_MODULE'] ?? '@vms/sip-edge')) as typeof EdgeModule;

const [portText, ...backends] = process.argv.slice(2);
const shards = backends.map((b, i) => {
  const [host = '127.0.0.1', port = '0'] = b.split(':');
  return { code: `shard-${i}`, sipHost: host, sipPort: Number(port), group: 'default', online: true, draining: false };
});
const edge = await startEdge({
  code: 'edge-bench',
  bindHost: '127.0.0.1',
  host: '127.0.0.1',
  port: Number(portText),
  transports: ['udp'],
  flowSecret: Buffer.alloc(32, 5),
  shards: createStaticShardSource(shards),
  // the bench offers one source address at thousands per second: the per-address bound would shed it
  perAddressRequestsPerSec: 10_000_000,
  maxRequestsPerSec: Number(process.env['VMS_BENCH_EDGE_CEILING'] ?? 10_000_000),
  log: silentLogger,
});
process.stdout.write(`edge listening ${edge.port}\n`);
process.on('SIGTERM', () => {
  process.stdout.write(`edge stats ${JSON.stringify(edge.stats())}\n`);
  void edge.close().then(() => process.exit(0));
});
