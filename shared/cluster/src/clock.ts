/**
 * Time source for the timer-driven parts of this package (claim batching, memory stores' TTLs).
 * Same shape as @vms/sip's Clock, which this package may not import (STYLE §5), so one clock object
 * can be passed to both.
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
    t.unref(); // a pending batch must not keep a closing process alive; close() settles it
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface FakeTimer {
  id: number;
  due: number;
  fn: () => void;
}

/** Deterministic clock for unit tests: timers fire only inside `advance()`, in due-time order. */
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

  get pending(): number {
    return this.#timers.size;
  }

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
}
