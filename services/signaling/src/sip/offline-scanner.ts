// Offline detection (SPEC §8, OWN-2). Every scan period: registrations whose lifetime ended are
// forgotten and marked offline ('expired'); devices whose last keepalive is older than
// keepalive interval × timeout count are marked offline ('keepalive-timeout'). The store's conditional
// markOffline decides races (a keepalive that lands during the scan wins), so instances sharing one
// database never report the same transition twice. The cutoff rule is pure; the timer is separate.
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceId } from '../devices/device.types.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import type { DeviceFlows } from './device-flows.ts';

/** Devices per findSilentDevices/markOffline round trip. */
export const OFFLINE_SCAN_BATCH = 1000;
/** Bound on rounds per scan, so a store that keeps answering the same ids cannot spin. */
const MAX_ROUNDS = 1000;

/** A device whose last keepalive is before this instant is offline. */
export function silentCutoff(now: number, keepaliveIntervalSec: number, timeoutCount: number): number {
  return now - keepaliveIntervalSec * timeoutCount * 1000;
}

export interface OfflineScanOptions {
  readonly devices: DeviceRepository;
  readonly flows: DeviceFlows;
  readonly events: DeviceEvents;
  readonly clock: Clock;
  readonly log: Logger;
  readonly keepaliveIntervalSec: number;
  readonly keepaliveTimeoutCount: number;
  readonly periodSec: number;
  readonly batch?: number;
  /**
   * Whether other instances write the same store (MySQL), so that one of them can mark a device of ours
   * offline (reassertOnline). Default true. False for the embedded store, whose only writer is this
   * instance: every offline mark it holds went through wentOffline, and the re-assertion's walk of every
   * online device each period had nothing to find (~20M instructions a scan at 7,300 devices, billed to
   * the registrations of register-callgrind's window when it fell there; issue 11).
   */
  readonly storeShared?: boolean;
}

export interface ScanOutcome {
  readonly expired: DeviceId[];
  readonly silent: DeviceId[];
  /** Devices of ours another instance had marked offline, put back online (see reassertOnline). */
  readonly reasserted: DeviceId[];
}

export interface OfflineScanner {
  start(): void;
  /** One scan now (also what the timer runs); concurrent calls share one scan. */
  scanOnce(): Promise<ScanOutcome>;
  /** Stops the timer and waits for a running scan. Idempotent. */
  close(): Promise<void>;
}

export function createOfflineScanner(o: OfflineScanOptions): OfflineScanner {
  const batch = o.batch ?? OFFLINE_SCAN_BATCH;
  let timer: TimerHandle | undefined;
  let running: Promise<ScanOutcome> | null = null;
  let closed = false;

  const wentOffline = (ids: readonly DeviceId[], reason: 'expired' | 'keepalive-timeout', at: number): void => {
    for (const deviceId of ids) {
      const session = o.flows.get(deviceId);
      if (session !== undefined) session.online = false;
      o.log.info({ deviceId, reason }, 'device offline');
      o.events.emit('offline', { deviceId, at, reason });
    }
  };

  // Every instance scans the shared store, and its view of keepalive_at lags the owner's write-behind
  // buffer, so another instance can mark one of our devices offline (a crashed owner's devices must be
  // marked by someone: SPEC OWN-2). For the devices it holds, the owner's mirror is authoritative:
  // whatever the store says offline while we still hear the device goes back online, with the event.
  const reassertOnline = async (): Promise<DeviceId[]> => {
    const mine = o.flows.onlineIds();
    const back: DeviceId[] = [];
    for (let i = 0; i < mine.length; i += batch) {
      const changed = await o.devices.markOnline(mine.slice(i, i + batch), o.clock.now());
      for (const deviceId of changed) {
        o.log.info({ deviceId }, 'device online again after a remote offline mark');
        o.events.emit('online', { deviceId, at: o.clock.now(), reason: 'reasserted' });
      }
      back.push(...changed);
    }
    return back;
  };

  const scan = async (): Promise<ScanOutcome> => {
    const now = o.clock.now();
    const lapsed = o.flows.expired(now);
    for (const id of lapsed) o.flows.forget(id);
    const expired = lapsed.length === 0 ? [] : await o.devices.markOffline(lapsed);
    wentOffline(expired, 'expired', now);

    const cutoff = silentCutoff(now, o.keepaliveIntervalSec, o.keepaliveTimeoutCount);
    const silent: DeviceId[] = [];
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const ids = await o.devices.findSilentDevices(cutoff, batch);
      if (ids.length === 0) break;
      const changed = await o.devices.markOffline(ids, { onlyIfKeepaliveBefore: cutoff });
      wentOffline(changed, 'keepalive-timeout', o.clock.now());
      silent.push(...changed);
      if (ids.length < batch || changed.length === 0) break;
    }
    const reasserted = o.storeShared === false ? [] : await reassertOnline();
    return { expired, silent, reasserted };
  };

  const scanOnce = (): Promise<ScanOutcome> => {
    running ??= scan().finally(() => {
      running = null;
    });
    return running;
  };

  const schedule = (): void => {
    if (closed) return;
    timer = o.clock.setTimeout(() => {
      timer = undefined;
      scanOnce().then(
        () => schedule(),
        (err: unknown) => {
          if (!closed) o.log.warn({ err }, 'offline scan failed, will retry next period');
          schedule();
        },
      );
    }, o.periodSec * 1000);
  };

  return {
    start() {
      if (timer === undefined && !closed) schedule();
    },
    scanOnce,
    async close() {
      closed = true;
      if (timer !== undefined) o.clock.clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => {});
    },
  };
}
