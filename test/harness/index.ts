// @vms/test: the integration-test harness. Real servers as local processes, ports from the OS,
// temp dirs and processes cleaned up on teardown and, failing that, at process exit.
export { freePort, freePorts, type FreePortOptions } from './ports.ts';
export { waitFor, sleep, timed, WaitTimeoutError, type WaitForOptions } from './wait.ts';
export { countLoopTurns, turnsDuring, type LoopTurns } from './loop-turns.ts';
export { tmpDir, type TmpDir } from './tmp.ts';
export { cleanupNow } from './cleanup.ts';
export { binarySearchDirs, findBinary, findBinaryIn, MissingBinaryError, requireBinary, requireBinaryIn } from './binaries.ts';
export { spawnManaged, type ManagedProcess, type SpawnOptions, type ExitInfo } from './child.ts';
export { startService, tsxArgs, type StartServiceOptions, type ServiceProcess, type ServiceEnv } from './service.ts';
export { startRedis, type StartRedisOptions, type RedisServer } from './redis.ts';
export { startRedisCluster, type StartRedisClusterOptions, type RedisClusterHandle } from './redis-cluster.ts';
export { startMariaDb, type StartMariaDbOptions, type MariaDbServer, type MariaDbTimings } from './mariadb.ts';
export { countStatements, type CountedPool } from './statement-counter.ts';
export {
  runSipp,
  writeInjectionCsv,
  parseStats as parseSippStats,
  type SippOptions,
  type SippResult,
  type SippRun,
  type SippStats,
  type SippTransport,
  type InjectionOrder,
} from './sipp.ts';
