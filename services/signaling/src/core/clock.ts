/**
 * Time is passed in (STYLE 4). Same shape as the Clock of @vms/sip and @vms/cluster, so one clock
 * object (system or fake) serves every package. Milliseconds since epoch.
 */
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
    t.unref(); // timers never keep a closing process alive; close() settles the work
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Deterministic clock for tests: timers fire only inside `advance()`, in due-time order. */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, { id: number; due: number; fn: () => void }>();

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
      let next: { id: number; due: number; fn: () => void } | undefined;
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
