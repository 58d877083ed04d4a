// Group commit of registrations for the MySQL device store (issue 11: a registration storm paid two
// round trips per REGISTER, the upsert and the read back, through a pool of ten connections).
//
// Unlike the embedded store's write-behind (registration-buffer.ts), a registration here still waits
// for its own write: the 200 OK follows a durable row that every other instance can read at once. What
// changes is that registrations arriving while batches are being written go together in the next one
// (one multi-row upsert and one read-back for all of them). Nothing waits on a timer: at a low rate a
// batch holds one registration and is written at once; under a storm the round trips per registration
// fall with the batch size.
//
// A device's registrations are written in the order they came: one still waiting while an earlier one
// of the same device is being written stays queued (batches in flight run on different connections).
//
// Bounded (SPEC SEC-3): at most `maxBatch` registrations per batch, `maxInFlight` batches written at
// once, `maxQueued` waiting; one more is refused at once with `QueueFullError` (the caller answers the
// device "try later" and its retransmission or next REGISTER comes back).
import type { Device, DeviceId, DeviceRegistration } from './device.types.ts';

export interface RegistrationBatchOptions {
  /** Writes the batch (in order: a later registration of the same device wins) and reads the rows back. */
  readonly write: (batch: readonly DeviceRegistration[]) => Promise<ReadonlyMap<DeviceId, Device>>;
  /** Registrations per batch at most; default 500. */
  readonly maxBatch?: number;
  /** Batches written at once at most; default 2. */
  readonly maxInFlight?: number;
  /** Registrations waiting for a batch at most; default 10,000. */
  readonly maxQueued?: number;
}

export const DEFAULT_REGISTRATION_BATCH = 500;
export const DEFAULT_REGISTRATION_BATCHES_IN_FLIGHT = 2;
export const DEFAULT_REGISTRATIONS_QUEUED = 10_000;

/** The registration was not queued: `maxQueued` already wait. Its `code` reads as "unavailable" (@vms/mysql-errors). */
export class RegistrationQueueFullError extends Error {
  readonly code = 'VMS_MYSQL_QUEUE_FULL';
  constructor(queued: number) {
    super(`${queued} registrations already wait for their write`);
    this.name = 'RegistrationQueueFullError';
  }
}

interface Waiting {
  readonly registration: DeviceRegistration;
  readonly resolve: (d: Device) => void;
  readonly reject: (err: unknown) => void;
}

export interface RegistrationBatches {
  /** Resolves with the device's row once its registration is written. */
  register(r: DeviceRegistration): Promise<Device>;
  /** Resolves when nothing is queued or being written. */
  drained(): Promise<void>;
}

export function createRegistrationBatches(o: RegistrationBatchOptions): RegistrationBatches {
  const maxBatch = o.maxBatch ?? DEFAULT_REGISTRATION_BATCH;
  const maxInFlight = o.maxInFlight ?? DEFAULT_REGISTRATION_BATCHES_IN_FLIGHT;
  const maxQueued = o.maxQueued ?? DEFAULT_REGISTRATIONS_QUEUED;
  let queue: Waiting[] = [];
  let inFlight = 0;
  let idle: (() => void)[] = [];

  const settleIdle = (): void => {
    if (inFlight > 0 || queue.length > 0) return;
    const waiters = idle;
    idle = [];
    for (const w of waiters) w();
  };

  const writeOne = async (batch: Waiting[]): Promise<void> => {
    try {
      const rows = await o.write(batch.map((w) => w.registration));
      for (const w of batch) {
        const device = rows.get(w.registration.deviceId);
        if (device === undefined) w.reject(new Error(`device ${w.registration.deviceId} not found after its registration was written`));
        else w.resolve(device);
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  };

  /** Devices with a registration being written: their next one waits, so an older row never lands last. */
  const writing = new Map<DeviceId, number>();
  const mark = (batch: readonly Waiting[], by: 1 | -1): void => {
    for (const { registration: { deviceId } } of batch) {
      const n = (writing.get(deviceId) ?? 0) + by;
      if (n === 0) writing.delete(deviceId);
      else writing.set(deviceId, n);
    }
  };

  /** Up to maxBatch of the queue in order, leaving those of devices still being written for later. */
  const takeBatch = (): Waiting[] => {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const w of queue) {
      if (batch.length < maxBatch && !writing.has(w.registration.deviceId)) batch.push(w);
      else rest.push(w);
    }
    queue = rest;
    return batch;
  };

  const pump = (): void => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = takeBatch();
      if (batch.length === 0) return; // all queued devices are being written: the next completion pumps
      mark(batch, 1);
      inFlight++;
      void writeOne(batch).finally(() => {
        mark(batch, -1);
        inFlight--;
        pump();
        settleIdle();
      });
    }
  };

  return {
    register(registration) {
      if (queue.length >= maxQueued) return Promise.reject(new RegistrationQueueFullError(queue.length));
      return new Promise<Device>((resolve, reject) => {
        queue.push({ registration, resolve, reject });
        pump();
      });
    },
    drained() {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}
