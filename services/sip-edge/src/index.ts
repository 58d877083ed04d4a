// @vms/sip-edge: the stateless SIP edge (issue 14). Nothing runs at import; src/main.ts is the process.
export { startEdge, type EdgeOptions, type EdgeStats, type SipEdge, DEFAULT_MAX_REQUESTS_PER_SEC, DEFAULT_PER_ADDRESS_REQUESTS_PER_SEC } from './edge.ts';
export { FlowCodec, type DeviceFlowRef } from './flow-token.ts';
export { forwardRequest, forwardResponse, FLOW_PARAM, SHARD_PARAM, type ForwardAction, type ForwardContext, type EdgeSelf } from './forward.ts';
export { createPolledShardSource, createStaticShardSource, type ShardSource } from './shard-source.ts';
export { loadEdgeConfig, EdgeConfigError, type EdgeConfig } from './config.ts';
export { TokenBucket, AddressBuckets } from './rate-limit.ts';
export { createEdgeMetrics, startMetricsServer, type EdgeMetrics, type MetricsServer } from './metrics.ts';
export { EdgeCounters, COUNTED_METHODS, DIRECTIONS, REFUSALS, SHED_BOUNDS } from './counters.ts';
export { FlowDevices, DEFAULT_MAX_FLOW_DEVICES } from './flow-devices.ts';
export { ShardLinks, type ShardLinkOptions, type ShardLinkStats, type LinkTransport } from './shard-links.ts';
