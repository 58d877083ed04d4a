// @vms/media: media nodes (ZLMediaKit) for the signaling platform: registry, HTTP API client, hooks,
// health, node selection, SSRCs and play URLs. Must not import @vms/sip or @vms/cluster (STYLE §5).
export { MEDIA_ERROR_INFO, MediaError, ZlmCallError, isMediaError, type MediaErrorCode, type ZlmCallContext } from './errors.ts';

export type { MediaNode, MediaNodeRegistry, PortRange } from './media-node.port.ts';
export { validateMediaNode } from './media-node.validate.ts';
export { createMemoryMediaNodeRegistry } from './media-node.memory.ts';
export { createMysqlMediaNodeRegistry } from './media-node.mysql.ts';
export { mediaNodeFromRow, mediaNodeRowValues, MEDIA_NODE_COLUMNS, type MediaNodeRow } from './media-node-row.ts';

export { createZlmClient, type ZlmClient, type ZlmClientOptions } from './zlm-client.ts';
export { createZlmClients, type ZlmClients } from './zlm-clients.ts';
export { ZLM_CALL_CHANNEL, type ZlmCallEvent, type ZlmNodeAddress, type ZlmTransportOptions } from './zlm-transport.ts';
export type {
  RtpTcpMode,
  OpenRtpServerParams,
  ConnectRtpServerParams,
  MediaListFilter,
  ZlmMediaInfo,
  StartSendRtpParams,
  StopSendRtpParams,
  ZlmRtpInfo,
  GetSnapParams,
} from './zlm-types.ts';

export {
  MEDIA_HOOK_NAMES,
  isMediaHookName,
  parseHookBody,
  type MediaHookName,
  type MediaHookEvent,
  type StreamChanged,
  type StreamNoneReader,
  type RtpServerTimeout,
  type ServerKeepalive,
  type Publish,
  type ServerStarted,
} from './hook-events.ts';
export {
  createHookHandler,
  secretMatches,
  type HookHandler,
  type HookHandlerOptions,
  type HookResult,
  type HookReply,
  type HookQuery,
  type HookNodeLookup,
  type PublishReplyOptions,
} from './hooks.ts';

export {
  DEFAULT_HEALTH_POLICY,
  UNKNOWN_HEALTH,
  NodeHealthTracker,
  recordKeepalive,
  recordSuccess,
  recordFailure,
  healthState,
  dueForProbe,
  type NodeHealth,
  type NodeHealthState,
  type HealthPolicy,
  type HealthClock,
} from './node-health.ts';

export type { MediaNodeSelector, MediaSelectRequest, MediaCandidate, MediaPurpose } from './media-selector.port.ts';
export { createLeastLoadSelector, selectLeastLoad } from './least-load-selector.ts';
export { StreamLedger, buildCandidates, type PlacedStream, type CandidateSources } from './stream-ledger.ts';

export { ssrcDomainPart, SSRC_SEQUENCE_MIN, SSRC_SEQUENCE_MAX, type SsrcAllocator } from './ssrc-allocator.port.ts';
export { createMemorySsrcAllocator } from './ssrc-allocator.memory.ts';
export {
  createRedisSsrcAllocator,
  DEFAULT_SSRC_TTL_MS,
  type RedisScriptClient,
  type RedisSsrcAllocatorOptions,
  type SsrcRenewTimers,
} from './ssrc-allocator.redis.ts';
export { probeTargets, judgeProbe, type ProbeOutcome, type ProbeVerdict } from './node-probe.ts';
export { streamUrls, type StreamUrls, type StreamUrlNode } from './stream-urls.ts';
export {
  createRoutingMediaSelector,
  defaultMediaTable,
  MEDIA_ROUTING_GROUP,
  type RoutingMediaSelector,
  type RoutingMediaSelectorOptions,
} from './routing-selector.ts';
