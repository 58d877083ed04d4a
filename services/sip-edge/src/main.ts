// The only file with side effects: read the settings, open the node table, start the edge, stop on signals.
import { createMysqlNodeRegistry, createMysqlPool } from '@vms/cluster';
import { pino } from 'pino';
import { EdgeConfigError, loadEdgeConfig } from './config.ts';
import { startEdge } from './edge.ts';
import { createEdgeMetrics, startMetricsServer } from './metrics.ts';
import { createPolledShardSource } from './shard-source.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadEdgeConfig(process.env);
  } catch (err) {
    if (err instanceof EdgeConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino({ level: config.logLevel, base: { service: 'sip-edge', code: config.code } });
  const pool = createMysqlPool(config.mysqlUrl);
  const registry = createMysqlNodeRegistry(pool);
  const shards = createPolledShardSource({ registry, onlineWindowMs: config.onlineWindowMs, pollMs: config.pollMs, log });
  await shards.refresh();
  const edge = await startEdge({ ...config, shards, log });
  const metrics = config.metricsPort === 0 ? null : await startMetricsServer(createEdgeMetrics({ counters: edge.counters, shards, links: edge.links, shedShare: () => edge.overload.shedder.fraction, returnsBooked: () => edge.overload.shedder.returnsBooked }), { host: config.metricsHost, port: config.metricsPort });
  if (metrics !== null) log.info({ port: metrics.port, host: config.metricsHost }, 'sip edge metrics listening');
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void Promise.all([edge.close(), metrics?.close()])
      .then(() => pool.end())
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
