// Write-behind buffer for keepalive times (SPEC OWN-5): `record` is O(1) and synchronous; a timer
// flushes the newest time per device in one batched write. Only one flush runs at a time; a failed
// batch is merged back (newer values win) and retried at the next tick.
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import type { DeviceId } from './device.types.ts';

export interface KeepaliveBufferOptions {
  readonly flushIntervalMs: number;
  /** Writes one batch. Called with at most one batch in flight. */
  readonly write: (batch: ReadonlyMap<DeviceId, number>) => Promise<void>;
  /** Called when `write` fails; the batch stays buffered. Logging belongs to the caller. */
  readonly onError: (err: unknown, size: number) => void;
  readonly clock?: Clock;
}

export interface KeepaliveBuffer {
  record(deviceId: DeviceId, at: number): void;
  /** Buffered (not yet written) keepalive time of a device. */
  pending(deviceId: DeviceId): number | undefined;
  readonly size: number;
  /** Writes everything buffered so far; resolves when it is written (or the write failed). */
  flush(): Promise<void>;
  start(): void;
  /** Stops the timer and writes what is left. Idempotent. */
  close(): Promise<void>;
}

export function createKeepaliveBuffer(options: KeepaliveBufferOptions): KeepaliveBuffer {
  const clock = options.clock ?? systemClock;
  let buffer = new Map<DeviceId, number>();
  /** The batch being written: still visible to `pending` until written. */
  let inFlight: ReadonlyMap<DeviceId, number> = new Map();
  let running: Promise<void> | null = null;
  let handle: TimerHandle | null = null;
  let closed: Promise<void> | null = null;

  const writeOnce = async (): Promise<void> => {
    if (buffer.size === 0) return;
    const batch = buffer;
    buffer = new Map();
    inFlight = batch;
    try {
      await options.write(batch);
    } catch (err) {
      for (const [id, at] of batch) {
        const newer = buffer.get(id);
        if (newer === undefined || newer < at) buffer.set(id, at);
      }
      options.onError(err, batch.size);
    } finally {
      inFlight = new Map();
    }
  };

  const flush = async (): Promise<void> => {
    // Wait for a running write, then write what arrived meanwhile.
    while (running !== null) await running;
    if (buffer.size === 0) return;
    running = writeOnce().finally(() => {
      running = null;
    });
    await running;
  };

  return {
    record(deviceId, at) {
      const prev = buffer.get(deviceId);
      if (prev === undefined || at > prev) buffer.set(deviceId, at);
    },
    pending(deviceId) {
      const a = buffer.get(deviceId);
      const b = inFlight.get(deviceId);
      return a === undefined ? b : b === undefined ? a : Math.max(a, b);
    },
    get size() {
      return buffer.size;
    },
    flush,
    start() {
      if (handle !== null || closed !== null) return;
      const tick = (): void => {
        handle = null;
        void flush().finally(() => {
          if (closed === null) handle = clock.setTimeout(tick, options.flushIntervalMs);
        });
      };
      handle = clock.setTimeout(tick, options.flushIntervalMs);
    },
    close() {
      closed ??= (async () => {
        if (handle !== null) clock.clearTimeout(handle);
        handle = null;
        await flush();
      })();
      return closed;
    },
  };
}
