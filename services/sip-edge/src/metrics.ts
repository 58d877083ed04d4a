// Prometheus metrics of one SIP edge (README "Metrics"): the forwarding path only bumps plain counters
// (counters.ts); this file turns them into prom-client series at scrape time, so a scrape costs nothing per
// message. No label carries an id or an address: methods, directions, reasons and shard states come from
// fixed sets.
import { createServer, type Server } from 'node:http';
import { isEligibleShard } from '@vms/routing';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { COUNTED_METHODS, DIRECTIONS, REFUSALS, SHED_BOUNDS, type EdgeCounters } from './counters.ts';
import type { ShardLinks } from './shard-links.ts';
import type { ShardSource } from './shard-source.ts';

export interface EdgeMetricsSources {
  readonly counters: EdgeCounters;
  readonly shards: ShardSource;
  /** The TCP links to shards, when the edge uses them. */
  readonly links?: ShardLinks | null;
  /** Share (0..1) of new REGISTERs the overload control answers 503 now (overload.ts). */
  readonly shedShare?: () => number;
  /** Devices told by a 503 to come back and not yet due (the overload control's return calendar). */
  readonly returnsBooked?: () => number;
  /** Node.js process metrics (event-loop lag, heap, CPU). Default true. */
  readonly defaultMetrics?: boolean;
}

export interface EdgeMetrics {
  readonly registry: Registry;
  render(): Promise<string>;
  readonly contentType: string;
}

/** A prom-client counter mirroring a monotonic number read at scrape time (incremented by the difference). */
function mirrored(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Iterable<[Record<string, string>, number]>): void {
  const seen = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, value] of read()) {
        const key = labelNames.map((l) => labels[l]).join('\u0000');
        const before = seen.get(key) ?? 0;
        if (value > before || !seen.has(key)) this.inc(labels, value - before);
        seen.set(key, value);
      }
    },
  });
}

export function createEdgeMetrics(s: EdgeMetricsSources): EdgeMetrics {
  const registry = new Registry();
  if (s.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'vms_edge_' });
  const c = s.counters;

  mirrored(registry, 'vms_edge_requests_forwarded_total', 'SIP requests forwarded, by method and direction', ['method', 'direction'], function* () {
    for (const [d, direction] of DIRECTIONS.entries()) for (const [m, method] of COUNTED_METHODS.entries()) yield [{ method, direction }, c.requests[d]![m]!];
  });
  mirrored(registry, 'vms_edge_responses_forwarded_total', 'SIP responses forwarded, by direction', ['direction'], function* () {
    for (const [d, direction] of DIRECTIONS.entries()) yield [{ direction }, c.responses[d]!];
  });
  mirrored(registry, 'vms_edge_shed_total', 'requests answered 503 + Retry-After at a bound: global ceiling, per source address, shard link queue, or overload (new REGISTERs while the edge is behind)', ['bound'], function* () {
    for (const [i, bound] of SHED_BOUNDS.entries()) yield [{ bound }, c.shed[i]!];
  });
  mirrored(registry, 'vms_edge_refused_total', 'requests answered (or responses dropped) by the edge itself, by reason; flow_token = a Route/Via flow not signed by an edge holding the secret', ['reason'], function* () {
    for (const [i, reason] of REFUSALS.entries()) yield [{ reason }, c.refused[i]!];
  });
  mirrored(registry, 'vms_edge_placements_total', 'device requests placed on a shard (one placement decision each)', [], function* () {
    yield [{}, c.placed];
  });
  mirrored(registry, 'vms_edge_placement_changes_total', 'times the set of shards placement may pick changed (a shard died, drained, came back or joined)', [], function* () {
    yield [{}, s.shards.changes()];
  });
  mirrored(registry, 'vms_edge_placement_fallbacks_total', 'times a placement group had no eligible shard in the node table and the edge started placing over its last eligible set (late heartbeats, shard-fallback.ts)', [], function* () {
    yield [{}, s.shards.fallbacks()];
  });
  new Gauge({
    name: 'vms_edge_placement_fallback_groups',
    help: 'placement groups with no eligible shard in the node table, placed over their last eligible set',
    registers: [registry],
    collect() {
      this.set(s.shards.fallbackGroups());
    },
  });
  mirrored(registry, 'vms_edge_dropped_total', 'messages dropped (unparseable for forwarding, ACK outside a forwarded INVITE, response not through this edge)', [], function* () {
    yield [{}, c.dropped];
  });
  mirrored(registry, 'vms_edge_send_errors_total', 'sends that failed (no route, TCP connection gone)', [], function* () {
    yield [{}, c.sendErrors];
  });
  new Gauge({
    name: 'vms_edge_shards',
    help: 'shards in the node table as this edge last read it, by state (eligible = online and not draining)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const list = s.shards.listed();
      const eligible = list.filter(isEligibleShard).length;
      const draining = list.filter((x) => x.online && x.draining).length;
      this.set({ state: 'eligible' }, eligible);
      this.set({ state: 'draining' }, draining);
      this.set({ state: 'offline' }, list.length - eligible - draining);
    },
  });
  const shedShare = s.shedShare;
  if (shedShare !== undefined) {
    new Gauge({
      name: 'vms_edge_register_shed_share',
      help: 'share (0..1) of new REGISTERs answered 503 + Retry-After now because the edge is behind (its receive queue or event loop over the marks)',
      registers: [registry],
      collect() {
        this.set(shedShare());
      },
    });
  }
  const returnsBooked = s.returnsBooked;
  if (returnsBooked !== undefined) {
    new Gauge({
      name: 'vms_edge_register_returns_booked',
      help: 'devices answered 503 whose Retry-After has not yet come: the backlog the edge spread over the coming seconds at the rate it admits',
      registers: [registry],
      collect() {
        this.set(returnsBooked());
      },
    });
  }
  const links = s.links;
  if (links !== undefined && links !== null) {
    new Gauge({
      name: 'vms_edge_shard_connections',
      help: 'TCP connections open from this edge to shards (VMS_EDGE_SHARD_TRANSPORT=tcp)',
      registers: [registry],
      collect() {
        this.set(links.stats().open);
      },
    });
    mirrored(registry, 'vms_edge_shard_connects_total', 'TCP connects to shards, by outcome (failed ones are retried with backoff)', ['outcome'], function* () {
      const st = links.stats();
      yield [{ outcome: 'attempted' }, st.connects];
      yield [{ outcome: 'failed' }, st.connectFailures];
    });
    mirrored(registry, 'vms_edge_shard_link_dropped_total', 'messages that waited for a shard connection whose connect failed (their senders retransmit)', [], function* () {
      yield [{}, links.stats().dropped];
    });
  }
  return { registry, contentType: registry.contentType, render: () => registry.metrics() };
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** `GET /metrics` (everything else 404), bounded: a few connections, short timeouts. */
export async function startMetricsServer(metrics: EdgeMetrics, o: { host: string; port: number }): Promise<MetricsServer> {
  const server: Server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.maxConnections = 32;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : o.port;
  let closing: Promise<void> | null = null;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
