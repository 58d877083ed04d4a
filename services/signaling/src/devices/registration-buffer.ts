// Write-behind of registrations for the embedded store (issue 11: a registration storm paid one SQLite
// commit per REGISTER). A registration is applied to the buffer at once and written with the others
// in one transaction when MAX_PENDING are waiting or FLUSH_MS after the first, whichever comes first;
// reads see it at once (the row as the upsert will leave it, `registeredRow`), and every other write of
// the store flushes the buffer first, so no later write (offline, provisioning, keepalive) is overtaken
// by an older registration.
//
// What a crash loses: the registrations of the last FLUSH_MS (at most MAX_PENDING) — the row of a new
// device, or a known device's new address and registered_at. Acceptable because what they record is
// lost with the process anyway: the flow binding (SPEC SEC-1) lives in memory, so after a restart every
// device must register again before anything is sent to it or accepted from it, and that REGISTER
// writes the row again. A clean close flushes everything.
import type { DeviceRowFields } from './device-rows.ts';
import { DEFAULT_TENANT, type DeviceId, type DeviceRegistration } from './device.types.ts';

/** A gb_device row of the embedded store (times as epoch milliseconds). */
type DeviceRow = DeviceRowFields<number>;

/** Registrations written in one transaction at most (~1-3 ms of SQLite work, as WRITE_CHUNK). */
export const MAX_PENDING = 1000;
/** Longest a registration waits for its write. */
export const FLUSH_MS = 100;
/**
 * Registrations kept while writes fail (a full disk, a locked file): past it a new device's REGISTER is
 * refused (RegistrationBacklogFullError: the store's failure, 500, and the device tries again later)
 * instead of growing the buffer without bound (SPEC SEC-3). A device already waiting only replaces its
 * entry, so registered devices' refreshes still go through.
 */
export const MAX_PENDING_WHILE_FAILING = 10 * MAX_PENDING;
/** Retries of a failing write back off from FLUSH_MS, doubling up to this. */
export const MAX_RETRY_MS = 5000;

/** The buffer is at MAX_PENDING_WHILE_FAILING while its writes fail. */
export class RegistrationBacklogFullError extends Error {
  constructor(readonly size: number) {
    super(`registration write-behind full while writes fail (${size} waiting)`);
    this.name = 'RegistrationBacklogFullError';
  }
}

/**
 * The row after the registration upsert (registration-upsert.sqlite.ts): a new device gets the
 * schema's defaults; a known one keeps its other columns, and keepalive_at never goes back.
 */
export function registeredRow(existing: DeviceRow | undefined, r: DeviceRegistration): DeviceRow {
  const base: DeviceRow = existing ?? {
    device_id: r.deviceId,
    tenant_id: DEFAULT_TENANT,
    name: null,
    manufacturer: null,
    model: null,
    firmware: null,
    transport: r.transport,
    charset: 'GB2312',
    password: null,
    remote_ip: null,
    remote_port: null,
    registered_at: null,
    keepalive_at: null,
    expires_sec: null,
    online: 0,
    channel_count: 0,
    created_at: r.at,
    updated_at: r.at,
  };
  return {
    ...base,
    transport: r.transport,
    remote_ip: r.remoteIp,
    remote_port: r.remotePort,
    registered_at: r.at,
    keepalive_at: Math.max(base.keepalive_at ?? r.at, r.at),
    expires_sec: r.expiresSec,
    online: 1,
    updated_at: r.at,
  };
}

export interface RegistrationBuffer {
  /** The pending registration of a device (the latest), if any. */
  pending(deviceId: DeviceId): DeviceRegistration | undefined;
  /**
   * Queues it; writes the batch at once when MAX_PENDING are waiting (not while writes fail: the
   * retry timer does, backing off). Throws RegistrationBacklogFullError for a device not yet waiting
   * when MAX_PENDING_WHILE_FAILING are.
   */
  add(r: DeviceRegistration): void;
  /** Writes everything pending now (synchronously, one transaction); a no-op when empty. */
  flush(): void;
  readonly size: number;
  /** Flushes and stops the timer. */
  close(): void;
}

/**
 * `write` runs the batch in one transaction and must throw on failure: the batch is then kept and
 * retried at the next flush (the error goes to `onError`), never dropped silently.
 */
export function createRegistrationBuffer(write: (batch: readonly DeviceRegistration[]) => void, onError: (err: unknown, size: number) => void): RegistrationBuffer {
  let pending = new Map<DeviceId, DeviceRegistration>();
  let timer: NodeJS.Timeout | null = null;
  /** Delay of the next retry while writes fail; 0 while they succeed. */
  let retryMs = 0;

  const flush = (): void => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      write([...batch.values()]);
      retryMs = 0;
    } catch (err) {
      // keep them (newer registrations of the same devices win) and try again later
      for (const [id, r] of batch) if (!pending.has(id)) pending.set(id, r);
      retryMs = retryMs === 0 ? FLUSH_MS : Math.min(retryMs * 2, MAX_RETRY_MS);
      onError(err, batch.size);
      schedule();
    }
  };
  const schedule = (): void => {
    if (timer !== null) return;
    timer = setTimeout(flush, retryMs === 0 ? FLUSH_MS : retryMs);
    timer.unref();
  };

  return {
    pending: (deviceId) => pending.get(deviceId),
    add(r) {
      const failing = retryMs !== 0;
      if (failing && pending.size >= MAX_PENDING_WHILE_FAILING && !pending.has(r.deviceId)) throw new RegistrationBacklogFullError(pending.size);
      pending.set(r.deviceId, r);
      // while writes fail, a full batch waits for the retry timer: not the whole backlog again per REGISTER
      if (pending.size >= MAX_PENDING && !failing) flush();
      else schedule();
    },
    flush,
    get size() {
      return pending.size;
    },
    close() {
      flush();
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
