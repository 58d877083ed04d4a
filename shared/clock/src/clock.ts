/**
 * Time source injected into every timer-driven part of the platform (SIP transactions, claim batching,
 * offline scans, registrations). Production uses `systemClock`; tests drive a `FakeClock` by hand so
 * that timer schedules (RFC 3261 ones included) can be checked to the millisecond without waiting.
 * One package so that one clock object serves every other package (STYLE §4).
 */
/** Opaque: whatever the clock's `setTimeout` returned. */
export type TimerHandle = object;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // Timers never keep a process alive on their own: each owner's close() is what ends its work.
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface FakeTimer {
  id: number;
  due: number;
  fn: () => void;
}

/**
 * Deterministic clock: timers fire only inside `advance()`, in due-time order (ties in creation
 * order), and timers scheduled while advancing fire in the same call if they fall due in the window.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, FakeTimer>();

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.#seq;
    this.#timers.set(id, { id, due: this.#now + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete((handle as { id: number }).id);
  }

  /** Number of armed timers (tests assert that terminated transactions leave none behind). */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.#timers.values()) {
        if (t.due <= target && (next === undefined || t.due < next.due || (t.due === next.due && t.id < next.id))) next = t;
      }
      if (next === undefined) break;
      this.#timers.delete(next.id);
      this.#now = next.due;
      next.fn();
    }
    this.#now = target;
  }

  /** Advances to the next armed timer and fires it (and any sharing its due time); returns the new time. */
  runNext(): number {
    let due: number | undefined;
    for (const t of this.#timers.values()) if (due === undefined || t.due < due) due = t.due;
    if (due !== undefined) this.advance(due - this.#now);
    return this.#now;
  }
}
