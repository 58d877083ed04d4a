/**
 * SPEC OWN-5: keepalive handling must stay fast at fleet scale, so heartbeat claims made within a
 * short window (or until a size cap) are coalesced into one claimMany() round trip. Pure batching
 * logic: the store call and the clock are injected, so tests drive it with a FakeClock.
 *
 * Within a window, several claims for the same device collapse into one (the last TTL wins) and all
 * their callers get the one result. Each caller learns the outcome of its own batch: a failed flush
 * rejects exactly the claims it carried.
 */
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import type { OwnershipClaim } from './ownership.port.ts';

export type ClaimSink = (claims: readonly OwnershipClaim[], instanceId: string) => Promise<void>;

export interface ClaimBatcherOptions {
  /** Usually `store.claimMany.bind(store)`. */
  sink: ClaimSink;
  /** Longest a claim waits for company. Default 2 ms. */
  maxDelayMs?: number;
  /** A batch is sent at once when it reaches this many distinct devices. Default 500. */
  maxBatch?: number;
  clock?: Clock;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface PendingClaim {
  ttlMs: number;
  waiters: Waiter[];
}

export class ClaimBatcher {
  readonly #sink: ClaimSink;
  readonly #maxDelayMs: number;
  readonly #maxBatch: number;
  readonly #clock: Clock;
  /** instanceId → deviceId → claim; an instance normally claims only for itself. */
  #pending = new Map<string, Map<string, PendingClaim>>();
  #pendingCount = 0;
  #timer: TimerHandle | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(opts: ClaimBatcherOptions) {
    this.#sink = opts.sink;
    this.#maxDelayMs = opts.maxDelayMs ?? 2;
    this.#maxBatch = Math.max(1, opts.maxBatch ?? 500);
    this.#clock = opts.clock ?? systemClock;
  }

  /** Distinct devices waiting for the next flush. */
  get pendingCount(): number {
    return this.#pendingCount;
  }

  /** Batches sent but not settled yet. */
  get inFlightCount(): number {
    return this.#inFlight.size;
  }

  /** Resolves when the batch carrying this claim has been written. */
  claim(deviceId: string, instanceId: string, ttlMs: number): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreClosedError('claim batcher is closed'));
    return new Promise<void>((resolve, reject) => {
      let byDevice = this.#pending.get(instanceId);
      if (byDevice === undefined) {
        byDevice = new Map();
        this.#pending.set(instanceId, byDevice);
      }
      const existing = byDevice.get(deviceId);
      if (existing !== undefined) {
        existing.ttlMs = ttlMs;
        existing.waiters.push({ resolve, reject });
      } else {
        byDevice.set(deviceId, { ttlMs, waiters: [{ resolve, reject }] });
        this.#pendingCount++;
      }
      if (this.#pendingCount >= this.#maxBatch) this.flush();
      else this.#timer ??= this.#clock.setTimeout(() => this.flush(), this.#maxDelayMs);
    });
  }

  /** Sends everything pending now (synchronously hands it to the sink). */
  flush(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pendingCount === 0) return;
    const batches = this.#pending;
    this.#pending = new Map();
    this.#pendingCount = 0;
    for (const [instanceId, byDevice] of batches) this.#send(instanceId, byDevice);
  }

  /**
   * Flushes and waits until every batch sent so far has settled (errors are the callers' business).
   * Call before an operation that must be ordered after earlier claims, e.g. releaseIfOwner.
   */
  async drain(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Idempotent. Pending (unsent) claims reject with StoreClosedError; sent ones settle normally. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const err = new StoreClosedError('claim batcher closed before the claim was sent');
    for (const byDevice of this.#pending.values()) {
      for (const p of byDevice.values()) for (const w of p.waiters) w.reject(err);
    }
    this.#pending = new Map();
    this.#pendingCount = 0;
  }

  #send(instanceId: string, byDevice: Map<string, PendingClaim>): void {
    const claims: OwnershipClaim[] = [];
    for (const [deviceId, p] of byDevice) claims.push({ deviceId, ttlMs: p.ttlMs });
    let sent: Promise<void>;
    try {
      sent = this.#sink(claims, instanceId);
    } catch (err) {
      sent = Promise.reject(err); // a sink that throws synchronously still settles its callers
    }
    const settled = sent.then(
      () => {
        for (const p of byDevice.values()) for (const w of p.waiters) w.resolve();
      },
      (err: unknown) => {
        for (const p of byDevice.values()) for (const w of p.waiters) w.reject(err);
      },
    );
    this.#inFlight.add(settled);
    void settled.finally(() => this.#inFlight.delete(settled));
  }
}
