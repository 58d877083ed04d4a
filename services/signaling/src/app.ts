// createApp(config, deps) → { start, close }: wires one signaling instance. Phase 1: device store and
// the HTTP control API; the SIP side plugs in through `deps.control` (DeviceControlService).
import { createMysqlPool, migrate } from '@vms/cluster';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'mysql2/promise';
import type { Logger } from 'pino';
import pkg from '../package.json' with { type: 'json' };
import type { Config } from './config/config.types.ts';
import { envNameOf } from './config/schema.ts';
import { createUnavailableDeviceControl } from './control/device-control.unavailable.ts';
import type { DeviceControlService } from './control/device-control.port.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { createMemoryDeviceRepository } from './devices/device-repository.memory.ts';
import { createMysqlDeviceRepository } from './devices/device-repository.mysql.ts';
import type { DeviceRepository } from './devices/device-repository.port.ts';
import { ShuttingDownError } from './errors/catalog.ts';
import { buildHttpApp } from './http/app.ts';
import type { OwnerRoutingHook } from './http/handler.types.ts';
import { createLogger } from './logging/logger.ts';
import { createStandaloneNodeDirectory } from './nodes/node-directory.standalone.ts';
import type { NodeDirectory } from './nodes/node-directory.port.ts';
import { createSelfOwnerDirectory } from './ownership/owner-directory.standalone.ts';
import type { OwnerDirectory } from './ownership/owner-directory.port.ts';
import { SQL_DIR } from './storage/sql-dir.ts';

export const SERVICE_VERSION: string = pkg.version;

/** Everything replaceable; defaults are the standalone implementations chosen from `config`. */
export interface AppDeps {
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly devices?: DeviceRepository;
  readonly control?: DeviceControlService;
  readonly nodes?: NodeDirectory;
  readonly owners?: OwnerDirectory;
  readonly ownerRouting?: OwnerRoutingHook;
  /** Platform UTC offset for zoned API times; default: this process's local offset. */
  readonly utcOffsetMinutes?: number;
}

export interface RunningApp {
  readonly httpPort: number;
  /** Base URL of the control API as bound, e.g. http://127.0.0.1:18080. */
  readonly httpUrl: string;
  /** This node's internal base URL (the configured one, or derived from the bound port). */
  readonly internalBaseUrl: string;
}

export interface App {
  /** Opens stores, applies migrations, listens. Calling it again returns the same result. */
  start(): Promise<RunningApp>;
  /** Stops listening, flushes and closes stores. Idempotent; safe during or after a failed start. */
  close(): Promise<void>;
}

/** Non-secret settings and where they came from, for the start-up log line. */
function describe(config: Config): Record<string, unknown> {
  const { sip } = config;
  return {
    sipAddress: `${sip.host}:${sip.port}`,
    serverId: sip.serverId,
    cascadeNode: sip.cascadeNode,
    forwarding: sip.nodeForwardSecret === null ? 'closed' : 'open',
    deviceAuth: sip.password === null ? 'none' : 'digest',
    keepalive: { intervalSec: sip.keepaliveIntervalSec, timeoutCount: sip.keepaliveTimeoutCount, offlineScanSec: sip.offlineScanPeriodSec },
    http: `${config.http.address}:${config.http.port}`,
    redis: config.redis?.mode ?? 'none',
    mysql: config.mysql === null ? 'none' : config.mysql.database,
    configFile: config.configFile,
    sources: config.sources,
  };
}

export function createApp(config: Config, deps: AppDeps = {}): App {
  const clock = deps.clock ?? systemClock;
  const log = deps.logger ?? createLogger(config.log.level, config.sip.instanceId);
  const closers: (() => Promise<void>)[] = [];
  let started: Promise<RunningApp> | null = null;
  let closed: Promise<void> | null = null;

  const openDevices = async (): Promise<DeviceRepository> => {
    if (deps.devices !== undefined) return deps.devices;
    if (config.mysql === null) return createMemoryDeviceRepository();
    const pool: Pool = createMysqlPool(config.mysql.url);
    closers.push(() => pool.end());
    const { applied } = await migrate(pool, SQL_DIR);
    if (applied.length > 0) log.info({ applied: applied.map((m) => m.version) }, 'schema migrations applied');
    const repo = createMysqlDeviceRepository({
      pool,
      clock,
      onKeepaliveFlushError: (err, size) => log.warn({ err, size }, 'keepalive batch write failed, will retry'),
    });
    closers.push(() => repo.close());
    return repo;
  };

  const doStart = async (): Promise<RunningApp> => {
    if (config.auth.signingKeySource === 'dev-default') {
      log.warn(
        { key: 'vms.auth.signing-key', env: envNameOf('vms.auth.signing-key') },
        'NO SIGNING KEY CONFIGURED: operator tokens use the public development key; set one before exposing this instance',
      );
    }
    if (config.redis !== null) log.warn({ redis: config.redis.mode }, 'redis is configured but cluster mode is not wired yet: running standalone');
    log.info(describe(config), 'starting signaling instance');

    const devices = await openDevices();
    const startedAt = clock.now();
    let boundPort = config.http.port;
    const internalBaseUrl = (): string =>
      config.sources['vms.gb28181.sip.internal-base-url'] === 'default' && config.http.port === 0
        ? config.sip.internalBaseUrl.replace(/:0$/, `:${boundPort}`)
        : config.sip.internalBaseUrl;

    const http: FastifyInstance = buildHttpApp({
      instanceId: config.sip.instanceId,
      signingKey: config.auth.signingKey,
      storage: config.mysql === null ? 'memory' : 'mysql',
      devices,
      control: deps.control ?? createUnavailableDeviceControl(),
      nodes:
        deps.nodes ??
        createStandaloneNodeDirectory({
          nodeCode: config.sip.instanceId,
          sipAddress: `${config.sip.host}:${config.sip.port}`,
          internalBaseUrl,
          cascadeNode: config.sip.cascadeNode,
          version: SERVICE_VERSION,
          startedAt,
          clock,
          devices,
        }),
      owners: deps.owners ?? createSelfOwnerDirectory(config.sip.instanceId),
      clock,
      logger: log,
      utcOffsetMinutes: deps.utcOffsetMinutes ?? -new Date(clock.now()).getTimezoneOffset(),
      ...(deps.ownerRouting === undefined ? {} : { ownerRouting: deps.ownerRouting }),
    });
    closers.push(() => http.close());
    await http.listen({ port: config.http.port, host: config.http.address });
    const address = http.server.address();
    boundPort = typeof address === 'object' && address !== null ? address.port : config.http.port;
    const host = config.http.address === '0.0.0.0' || config.http.address === '::' ? '127.0.0.1' : config.http.address;
    const running: RunningApp = {
      httpPort: boundPort,
      httpUrl: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`,
      internalBaseUrl: internalBaseUrl(),
    };
    log.info(running, 'signaling instance started');
    return running;
  };

  return {
    start() {
      if (closed !== null) return Promise.reject(new ShuttingDownError());
      started ??= doStart();
      return started;
    },
    close() {
      closed ??= (async () => {
        await started?.catch(() => {}); // a failed start is reported by start(); close what it opened
        // Reverse order of opening: HTTP first, then the stores it used.
        for (const close of closers.reverse()) {
          try {
            await close();
          } catch (err) {
            log.warn({ err }, 'error while closing');
          }
        }
        log.info('signaling instance stopped');
      })();
      return closed;
    },
  };
}
