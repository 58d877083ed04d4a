// SPEC NODE-1 / FAIL-4: upsert this node's row at start and on every heartbeat, then re-read the table
// (online nodes, cascade leader). A failed beat never stops the loop: it is logged once per outage and
// the next tick tries again; the tracker keeps the last good listing meanwhile.
// SPEC ROUTE-6: with more than one node online and no forward secret, one warning in the log.
import { retryTransient, type NodeInfo, type NodeRegistry } from '@vms/cluster';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { envNameOf } from '../config/schema.ts';
import type { NodeTracker } from './node-tracker.ts';

export interface NodeHeartbeatOptions {
  readonly registry: NodeRegistry;
  readonly tracker: NodeTracker;
  /** Read at every beat: the internal base URL is known only once HTTP is bound. */
  readonly self: () => NodeInfo;
  /** NODE-2: devices this node serves, reported with each beat. */
  readonly onlineDeviceCount: () => number | Promise<number>;
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly forwardSecretConfigured: boolean;
}

export interface NodeHeartbeat {
  /** First beat (awaited, failure logged not thrown), then one every interval. */
  start(): Promise<void>;
  /** One beat now; true when both the upsert and the re-read succeeded. */
  beat(): Promise<boolean>;
  /**
   * Stops the loop, waits for a beat in flight, then marks this node as left (offline at once for the
   * others: the cascade leader moves and forwards stop without waiting out the online window). A
   * failure to mark is logged, never thrown. Idempotent.
   */
  close(): Promise<void>;
}

export function createNodeHeartbeat(o: NodeHeartbeatOptions): NodeHeartbeat {
  const log = o.log.child({ component: 'node-heartbeat' });
  let timer: TimerHandle | undefined;
  let closed = false;
  let leaving: Promise<void> | null = null;
  let inFlight: Promise<boolean> | null = null;
  let failures = 0;
  let lastCount = 0;
  let warnedNoSecret = false;
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => o.clock.setTimeout(resolve, ms));

  const beatOnce = async (): Promise<boolean> => {
    try {
      lastCount = await o.onlineDeviceCount();
    } catch (err) {
      log.debug({ err }, 'online device count unavailable, reporting the last one');
    }
    try {
      // a short in-beat retry rides over a blip; a longer outage is the loop's business
      await retryTransient(() => o.registry.heartbeat(o.self(), lastCount), { attempts: 2, baseDelayMs: 100, sleep });
      await o.tracker.refresh();
    } catch (err) {
      failures++;
      if (failures === 1) log.warn({ err }, 'node heartbeat failed, retrying every interval');
      else log.debug({ err, failures }, 'node heartbeat still failing');
      return false;
    }
    if (failures > 0) log.info({ failures }, 'node heartbeat recovered');
    failures = 0;
    if (!o.forwardSecretConfigured && !warnedNoSecret && o.tracker.onlineCount() > 1) {
      warnedNoSecret = true;
      log.warn(
        { onlineNodes: o.tracker.onlineCount(), key: 'vms.gb28181.sip.node-forward-secret', env: envNameOf('vms.gb28181.sip.node-forward-secret') },
        'several signaling nodes are online but no node-forward-secret is set: controls for devices owned by other nodes will be refused',
      );
    }
    return true;
  };

  const beat = (): Promise<boolean> => {
    inFlight ??= beatOnce().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };

  // Fixed rate: the next beat is due one interval after the previous one started, not after it ended.
  // Others judge this node online by the age of its last upsert (3 intervals), so a slow re-read of the
  // table (a loaded database) must not push the next upsert back by its own duration.
  const schedule = (startedAt: number): void => {
    if (closed) return;
    const delay = Math.max(0, startedAt + o.intervalMs - o.clock.now());
    timer = o.clock.setTimeout(() => {
      timer = undefined;
      const at = o.clock.now();
      void beat().finally(() => schedule(at));
    }, delay);
  };

  return {
    async start() {
      const at = o.clock.now();
      await beat();
      schedule(at);
    },
    beat,
    close() {
      leaving ??= (async () => {
        closed = true;
        if (timer !== undefined) o.clock.clearTimeout(timer);
        timer = undefined;
        await inFlight;
        const code = o.self().code;
        try {
          await o.registry.leave(code);
          log.info({ nodeCode: code }, 'left the node table');
        } catch (err) {
          log.warn({ err, nodeCode: code }, 'could not mark this node as left: the others see it offline when its heartbeat ages out');
        }
      })();
      return leaving;
    },
  };
}
