// @vms/routing: the routing engine (SPEC §10). Pure decisions over an immutable compiled table; storage,
// reload, probing and HTTP live in their own files and services. Nothing runs at import.
export {
  ALGORITHMS,
  MATCH_FIELDS,
  type Algorithm,
  type Destination,
  type DestinationKind,
  type DestinationSet,
  type DestinationState,
  type SetMember,
  type MatchField,
  type TimeWindow,
  type GrayRelease,
  type ReleaseCondition,
  type ReleaseKey,
  type ConditionField,
  type ConditionOp,
  type Rule,
  type TableSource,
} from './types.ts';
export { compileTable, compileTableSliced, validateTable, MAX_ISSUES, type CompileResult, type TableIssue } from './compile.ts';
export { RoutingTable } from './table.ts';
export { TableBuilder, assembleTable, type TableTopology, type BuiltRules, type BuildOutcome } from './compile.ts';
export {
  createWorkerTableBuilder,
  TableBuildAbortedError,
  DEFAULT_BUILD_DEADLINE_MS,
  DEFAULT_BUILD_THREAD_IDLE_MS,
  MAX_BUILD_THREAD_IDLE_MS,
  REPLACE_BASE_MS,
  REPLACE_MAX_MS,
  replacementDelayMs,
  KEEP_WARM_RULES,
  keepBuildThreadWarm,
  type BuildTimes,
  type WarmTimes,
  type BuildThreadLog,
  type WorkerTableBuilder,
  type WorkerBuildOptions,
  type VersionSourceSpec,
} from './table-worker.ts';
export { WARMUP_RULES } from './warmup-table.ts';
export type { VersionSource } from './table-build.worker.ts';
export { mysqlVersionSource, openMysqlVersionSource, MYSQL_VERSION_SOURCE } from './version-source.mysql.ts';
export { memoryVersionSource, openMemoryVersionSource, MEMORY_VERSION_SOURCE } from './version-source.memory.ts';
export { compileStoredVersion, tableDataReader } from './compile-stored.ts';
export type { Decision, DecisionReason, DecideRequest, DecideInputs } from './decision.ts';
export { releaseBucket, type ReleaseInput } from './gray-release.ts';
export { ZoneClock, type LocalTime } from './time-window.ts';
export { MAX_PREFIX_DIGITS } from './prefix-index.ts';
export { ShadowComparator, SHADOW_SAMPLES, type ShadowReport, type ShadowGroupReport, type ShadowSample } from './shadow.ts';

export { RoutingError, isRoutingError, type RoutingErrorCode } from './errors.ts';
export type { RoutingStore, VersionReader, RoutingDraft, DraftRule, TableData, VersionInfo, PublishRequest, PublishResult } from './routing-store.port.ts';
export { createMemoryRoutingStore } from './routing-store.memory.ts';
export { createMysqlRoutingStore } from './routing-store.mysql.ts';
export { destinationFromRow, jsonColumn, ruleFromRow, type RoutingDestinationRow, type RoutingRuleRow } from './routing-rows.ts';
export {
  RoutingReloader,
  ROUTING_RELOAD_CHANNEL,
  type RoutingReloaderOptions,
  type ReloadEvent,
  type ReloadOutcome,
  type ReloadStats,
  type ReloadLog,
} from './reloader.ts';
export { ROUTING_NUDGE_CHANNEL, publishRoutingNudge, publishRoutingPrepare, subscribeRoutingNudges, type NudgePublisher, type NudgeSubscriber } from './routing-nudge.redis.ts';
export {
  DEFAULT_ROUTING_HEALTH_POLICY,
  initialHealth,
  effectiveState,
  stepHealth,
  type HealthPolicy,
  type DestinationHealth,
  type HealthEvent,
  type ManualOverride,
} from './health.ts';
export type { HealthStore } from './health-store.port.ts';
export { createMemoryHealthStore } from './health-store.memory.ts';
export {
  createRedisHealthStore,
  parseHealth,
  subscribeHealthChanges,
  ROUTING_HEALTH_KEY,
  ROUTING_HEALTH_CHANNEL,
  type HealthRedis,
  type HealthSubscriber,
} from './health-store.redis.ts';
export { RoutingHealthMonitor, MAX_CONCURRENT_PROBES, MAX_PROBES_PER_ROUND, type Prober, type RoutingHealthMonitorOptions, type HealthMonitorLog, type HealthChangeListener } from './health-monitor.ts';
export {
  DEFAULT_PLACEMENT_GROUP,
  compilePlacementRules,
  placementGroup,
  placeDevice,
  isEligibleShard,
  drainSlot,
  type Shard,
  type PlacementRule,
  type PlacementPolicy,
} from './placement.ts';
export { fmix32, hashString } from './hash.ts';
