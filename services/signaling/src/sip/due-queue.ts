// One timer for many deadlines (subscription refreshes of every device): a binary min-heap of
// (dueAt, key, generation). Rescheduling a key bumps its generation; older entries are skipped when
// popped, and the heap is rebuilt when stale ones outnumber the live ones. Pure: `now` is passed in.

interface Entry {
  readonly dueAt: number;
  readonly key: string;
  readonly gen: number;
}

export class DueQueue {
  #heap: Entry[] = [];
  readonly #gen = new Map<string, number>();
  #seq = 0;

  /** Keys with a live deadline. */
  get size(): number {
    return this.#gen.size;
  }

  /** Heap entries, stale ones included (≤ 2 × size + 16): the bound's witness. */
  get backlog(): number {
    return this.#heap.length;
  }

  schedule(key: string, dueAt: number): void {
    const gen = ++this.#seq;
    this.#gen.set(key, gen);
    this.#push({ dueAt, key, gen });
    if (this.#heap.length > 2 * this.#gen.size + 16) this.#rebuild();
  }

  cancel(key: string): void {
    this.#gen.delete(key);
  }

  /** Earliest live deadline, or null. */
  nextDueAt(): number | null {
    this.#dropStale();
    return this.#heap[0]?.dueAt ?? null;
  }

  /** Removes and returns the keys due at `now`, earliest first. */
  takeDue(now: number): string[] {
    const out: string[] = [];
    for (;;) {
      this.#dropStale();
      const top = this.#heap[0];
      if (top === undefined || top.dueAt > now) return out;
      this.#pop();
      this.#gen.delete(top.key);
      out.push(top.key);
    }
  }

  #live(e: Entry): boolean {
    return this.#gen.get(e.key) === e.gen;
  }

  #dropStale(): void {
    while (this.#heap.length > 0 && !this.#live(this.#heap[0] as Entry)) this.#pop();
  }

  #rebuild(): void {
    const live = this.#heap.filter((e) => this.#live(e));
    this.#heap = [];
    for (const e of live) this.#push(e);
  }

  #push(e: Entry): void {
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((h[p] as Entry).dueAt <= e.dueAt) break;
      h[i] = h[p] as Entry;
      i = p;
    }
    h[i] = e;
  }

  #pop(): void {
    const h = this.#heap;
    const last = h.pop() as Entry;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      let best = last;
      if (l < h.length && (h[l] as Entry).dueAt < best.dueAt) {
        m = l;
        best = h[l] as Entry;
      }
      if (r < h.length && (h[r] as Entry).dueAt < best.dueAt) m = r;
      if (m === i) break;
      h[i] = h[m] as Entry;
      i = m;
    }
    h[i] = last;
  }
}
