// Builds the media side of one instance: the node registry (MySQL when configured, else memory)
// seeded from `vms.media.nodes`, the media plane, INVITE signaling on the device side's SIP stack,
// the session manager, MediaStatus from the device events, and the webhook handler (node secret).
import { createHookHandler, createMemoryMediaNodeRegistry, createMysqlMediaNodeRegistry, type HookHandler, type MediaNodeRegistry } from '@vms/media';
import { createMysqlPool } from '@vms/cluster';
import { nanoid } from 'nanoid';
import type { Logger } from 'pino';
import type { SessionDirectory } from '../cluster/device-index.port.ts';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import type { DeviceSide } from '../sip/device-side.ts';
import { createMediaPlane } from './media-plane.ts';
import { createMediaSessionManager, type MediaSessionManager } from './media-session-manager.ts';
import { createSipMediaSignaling } from './media-signaling.sip.ts';

/** GB/T 28181 gives no INVITE deadline; devices answer in well under a second, NVRs in a few. */
export const INVITE_TIMEOUT_MS = 8000;
export const ZLM_API_TIMEOUT_MS = 5000;
export const NODE_LIST_REFRESH_MS = 10_000;

export interface MediaWiring {
  readonly sessions: MediaSessionManager;
  /** The media node client for snapshots and the like. */
  readonly plane: ReturnType<typeof createMediaPlane>;
  readonly hooks: HookHandler;
  close(): Promise<void>;
}

export interface MediaWiringDeps {
  readonly config: Config;
  readonly side: Pick<DeviceSide, 'stack' | 'flows'>;
  readonly events: DeviceEvents;
  readonly directory: SessionDirectory;
  readonly clock: Clock;
  readonly log: Logger;
  readonly inviteTimeoutMs?: number;
}

export async function openMedia(d: MediaWiringDeps): Promise<MediaWiring> {
  const closers: (() => Promise<void>)[] = [];
  let registry: MediaNodeRegistry;
  if (d.config.mysql !== null) {
    const pool = createMysqlPool(d.config.mysql.url, { connectionLimit: 2 });
    closers.push(() => pool.end());
    registry = createMysqlMediaNodeRegistry(pool); // table from deploy/sql V003, migrated at start
  } else {
    registry = createMemoryMediaNodeRegistry();
  }
  const reg = registry;
  closers.push(() => reg.close());
  const plane = createMediaPlane({
    registry,
    seed: d.config.media.nodes,
    serverId: d.config.sip.serverId,
    clock: d.clock,
    log: d.log,
    apiTimeoutMs: ZLM_API_TIMEOUT_MS,
    refreshMs: NODE_LIST_REFRESH_MS,
  });
  closers.push(() => plane.close());
  const closeAll = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch((err: unknown) => d.log.warn({ err }, 'error while closing media'));
  };
  try {
    await plane.start();
  } catch (err) {
    await closeAll();
    throw err;
  }
  const sessions = createMediaSessionManager({
    plane,
    signaling: createSipMediaSignaling({
      stack: d.side.stack,
      flows: d.side.flows,
      sip: d.config.sip,
      clock: d.clock,
      inviteTimeoutMs: d.inviteTimeoutMs ?? INVITE_TIMEOUT_MS,
    }),
    directory: d.directory,
    clock: d.clock,
    log: d.log,
    serverId: d.config.sip.serverId,
    newId: () => nanoid(),
  });
  const offStatus = d.events.on('mediaStatus', (e) => sessions.onMediaStatus(e));
  const offOffline = d.events.on('offline', (e) => sessions.onDeviceGone(e.deviceId));
  closers.push(async () => {
    offStatus();
    offOffline();
  });
  closers.push(() => sessions.close());
  const hooks = createHookHandler({ lookupNode: (id) => plane.node(id) });
  let closed: Promise<void> | null = null;
  return {
    sessions,
    plane,
    hooks,
    close() {
      closed ??= closeAll();
      return closed;
    },
  };
}
