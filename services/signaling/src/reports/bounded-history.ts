// Per-key histories with two bounds (SPEC SEC-3): at most `perKey` entries per key and `total` over
// all keys, the oldest dropped first — per key when a key is full, globally when the total is. One
// global arrival queue finds the oldest entry overall; entries a per-key drop already removed stay in
// it marked gone and are skipped, and the queue is compacted once the gone ones are half of it, so it
// never holds more than twice the live entries.

interface Slot<T> {
  readonly key: string;
  readonly value: T;
  gone: boolean;
}

export class BoundedHistory<T> {
  readonly #byKey = new Map<string, Slot<T>[]>();
  #arrivals: Slot<T>[] = [];
  #head = 0;
  #live = 0;

  constructor(
    private readonly perKey: number,
    private readonly total: number,
  ) {
    if (!(perKey >= 1 && total >= 1)) throw new RangeError('bounds must be at least 1');
  }

  get size(): number {
    return this.#live;
  }

  /** Entries the arrival queue holds, gone ones included (≤ 2 × size + 16): the bound's witness. */
  get backlog(): number {
    return this.#arrivals.length - this.#head;
  }

  add(key: string, value: T): void {
    const slot: Slot<T> = { key, value, gone: false };
    let list = this.#byKey.get(key);
    if (list === undefined) {
      list = [];
      this.#byKey.set(key, list);
    }
    list.push(slot);
    this.#arrivals.push(slot);
    this.#live++;
    if (list.length > this.perKey) this.#drop(list.shift() as Slot<T>);
    while (this.#live > this.total) this.#dropOldest();
    this.#compact();
  }

  /** Oldest first; a copy. */
  list(key: string): T[] {
    return (this.#byKey.get(key) ?? []).map((s) => s.value);
  }

  latest(key: string): T | undefined {
    const list = this.#byKey.get(key);
    return list === undefined ? undefined : list[list.length - 1]?.value;
  }

  #drop(slot: Slot<T>): void {
    slot.gone = true;
    this.#live--;
  }

  #dropOldest(): void {
    while (this.#head < this.#arrivals.length) {
      const slot = this.#arrivals[this.#head++] as Slot<T>;
      if (slot.gone) continue;
      const list = this.#byKey.get(slot.key) as Slot<T>[];
      list.shift(); // a key's oldest entry is its earliest arrival
      if (list.length === 0) this.#byKey.delete(slot.key);
      this.#drop(slot);
      return;
    }
  }

  #compact(): void {
    const held = this.#arrivals.length - this.#head;
    if (held <= 2 * this.#live + 16) return;
    this.#arrivals = this.#arrivals.slice(this.#head).filter((s) => !s.gone);
    this.#head = 0;
  }
}
