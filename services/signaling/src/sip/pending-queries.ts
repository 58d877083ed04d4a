// Correlated waits for MANSCDP answers (STYLE 8): every query gets a fresh SN from one per-instance
// monotonic counter, an entry in the pending map, and timers per phase. A Response MESSAGE is matched
// by SN *and* sender device *and* CmdType (devices reuse small SNs in unsolicited reports, sample 07).
// Settling deletes the entry first; a reply for an SN settled recently is a late reply: logged and
// dropped, never thrown and never mistaken for an unsolicited report. close() rejects everything.
import { createSnGenerator, type SnGenerator } from '@vms/gb28181';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { DeviceTimeoutError, ShuttingDownError, type VmsError } from '../errors/catalog.ts';

/** Collects the Response bodies of one query (one or several MESSAGEs, SumNum paging). */
export interface Assembly<B, R> {
  /** Adds one Response body; returns true once the result is complete. */
  add(body: B): boolean;
  /** The result to resolve with when the wait ends before completion; undefined = reject (timeout). */
  partial(): R | undefined;
  result(): R;
}

/** An answer of one message (DeviceInfo, DeviceStatus, most 2022 queries): complete with the first body. */
export function singleAnswer<B>(): Assembly<B, B> {
  let body: B | undefined;
  return {
    add(b) {
      body = b;
      return true;
    },
    partial: () => undefined,
    result: () => body as B,
  };
}

export interface PendingSpec<B, R> {
  readonly deviceId: DeviceId;
  /** CmdType of the expected Response. */
  readonly cmdType: string;
  /** For error messages and logs, e.g. 'catalog query'. */
  readonly operation: string;
  /** Wait for the first Response (phase 'response'). */
  readonly firstTimeoutMs: number;
  /** Wait between two Responses of a multi-MESSAGE answer. Default: firstTimeoutMs. */
  readonly nextTimeoutMs?: number;
  /** Upper bound for the whole answer however slowly pages trickle in. Default: no bound. */
  readonly maxTotalMs?: number;
  readonly assembly: Assembly<B, R>;
}

export interface PendingHandle<R> {
  readonly sn: number;
  readonly result: Promise<R>;
}

export type Delivery = 'matched' | 'late' | 'unmatched';

export interface PendingQueriesOptions {
  readonly clock: Clock;
  readonly log: Logger;
  /** First SN; default derived from the clock so a restarted instance does not reuse recent SNs. */
  readonly snSeed?: number;
  /** How many settled SNs are remembered to recognise late replies. Default 4096. */
  readonly lateMemory?: number;
}

interface Entry {
  readonly sn: number;
  readonly spec: PendingSpec<unknown, unknown>;
  readonly deadline: number;
  timer: TimerHandle | undefined;
  resolve(value: unknown): void;
  reject(err: VmsError): void;
}

/** SNs are compared as numbers: `007` and `7` are the same command. Non-numeric SNs never match. */
export function snKey(sn: string | number): number | null {
  if (typeof sn === 'number') return Number.isSafeInteger(sn) ? sn : null;
  const t = sn.trim();
  return /^\d{1,15}$/.test(t) ? Number(t) : null;
}

/** Seed from the clock: seconds within ~11.5 days × 100, far from the small SNs devices use themselves. */
export function seedFromClock(now: number): number {
  return (Math.floor(now / 1000) % 1_000_000) * 100 + 1000;
}

export class PendingQueries {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #sn: SnGenerator;
  readonly #pending = new Map<number, Entry>();
  /** Recently settled SNs (insertion order = age) → device, for late-reply recognition. */
  readonly #settled = new Map<number, DeviceId>();
  readonly #lateMemory: number;
  #closed = false;

  constructor(opts: PendingQueriesOptions) {
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#sn = createSnGenerator({ seed: opts.snSeed ?? seedFromClock(opts.clock.now()) });
    this.#lateMemory = opts.lateMemory ?? 4096;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** An SN for a command nobody waits an answer for (PTZ, device control). */
  nextSn(): number {
    return this.#sn.next();
  }

  open<B, R>(spec: PendingSpec<B, R>): PendingHandle<R> {
    if (this.#closed) return { sn: 0, result: Promise.reject(new ShuttingDownError()) };
    let sn = this.#sn.next();
    while (this.#pending.has(sn)) sn = this.#sn.next(); // only after a wrap-around
    let resolve!: (v: R) => void;
    let reject!: (e: VmsError) => void;
    const result = new Promise<R>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // The caller may still be sending the query when close() or fail() rejects it; whoever awaits
    // `result` still gets the rejection, but it never counts as unhandled in between.
    result.catch(() => {});
    const entry: Entry = {
      sn,
      spec: spec as PendingSpec<unknown, unknown>,
      deadline: spec.maxTotalMs === undefined ? Number.POSITIVE_INFINITY : this.#clock.now() + spec.maxTotalMs,
      timer: undefined,
      resolve: resolve as (v: unknown) => void,
      reject,
    };
    this.#pending.set(sn, entry);
    this.#arm(entry, spec.firstTimeoutMs);
    return { sn, result };
  }

  /**
   * Offers a Response body from `deviceId`. `matched`: consumed by a waiting query; `late`: answers a
   * query that already settled (logged, drop it); `unmatched`: not ours (an unsolicited report).
   */
  deliver(deviceId: DeviceId, cmdType: string, sn: string, body: unknown): Delivery {
    const key = snKey(sn);
    if (key === null) return 'unmatched';
    const entry = this.#pending.get(key);
    if (entry === undefined || entry.spec.deviceId !== deviceId || entry.spec.cmdType !== cmdType) {
      if (this.#settled.get(key) === deviceId) {
        this.#log.info({ deviceId, sn, cmdType }, 'late reply to a settled query dropped');
        return 'late';
      }
      return 'unmatched';
    }
    let complete: boolean;
    try {
      complete = entry.spec.assembly.add(body);
    } catch (err) {
      this.#log.warn({ err, deviceId, sn, cmdType }, 'query response could not be assembled, ignored');
      return 'matched';
    }
    if (complete) this.#settle(entry, () => entry.resolve(entry.spec.assembly.result()));
    else this.#arm(entry, entry.spec.nextTimeoutMs ?? entry.spec.firstTimeoutMs);
    return 'matched';
  }

  /** The query could not be sent (SIP failure): reject it now. No-op when already settled. */
  fail(sn: number, err: VmsError): void {
    const entry = this.#pending.get(sn);
    if (entry !== undefined) this.#settle(entry, () => entry.reject(err));
  }

  /** Rejects every pending query with ShuttingDownError. Idempotent. */
  close(): void {
    this.#closed = true;
    for (const entry of [...this.#pending.values()]) this.#settle(entry, () => entry.reject(new ShuttingDownError()));
  }

  #arm(entry: Entry, ms: number): void {
    if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    const wait = Math.max(0, Math.min(ms, entry.deadline - this.#clock.now()));
    entry.timer = this.#clock.setTimeout(() => {
      entry.timer = undefined;
      this.#timedOut(entry);
    }, wait);
  }

  #timedOut(entry: Entry): void {
    if (this.#pending.get(entry.sn) !== entry) return;
    const { deviceId, operation } = entry.spec;
    const partial = entry.spec.assembly.partial();
    if (partial !== undefined) {
      this.#log.info({ deviceId, sn: entry.sn, operation }, 'query answer incomplete when its wait ended; partial result kept');
      this.#settle(entry, () => entry.resolve(partial));
    } else {
      this.#settle(entry, () => entry.reject(new DeviceTimeoutError(deviceId, operation, 'response')));
    }
  }

  /** Delete before settle: whatever the settle callback triggers sees the entry gone. */
  #settle(entry: Entry, settle: () => void): void {
    this.#pending.delete(entry.sn);
    if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    entry.timer = undefined;
    this.#settled.set(entry.sn, entry.spec.deviceId);
    if (this.#settled.size > this.#lateMemory) {
      const oldest = this.#settled.keys().next().value;
      if (oldest !== undefined) this.#settled.delete(oldest);
    }
    settle();
  }
}
