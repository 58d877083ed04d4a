import type { Clock, TimerHandle } from '../clock.ts';

/**
 * RFC 3261 §17.2.2: a non-INVITE server transaction over UDP stays Completed for Timer J (64·T1 = 32 s),
 * answering every retransmission of its request with its final response, then ends. Kept as a state
 * machine that is a transaction object, its timer (a Timeout, its closure and the timer table), the
 * sink and transaction-user closures and the resender, all promoted to V8's old generation by the time
 * Timer J fires: a REGISTER storm of N/s keeps 32·N such graphs, and the major collections they bring
 * fell every few thousand registrations (~300k instructions each, issue 11).
 *
 * Here the Completed state is data: one entry per transaction (its key → what resends the final, as
 * the transport returned it), kept in arrival order, which with one lifetime for all is expiry order,
 * so a sweep deletes from the front of a queue. One timer for the whole table, armed for the oldest entry: an
 * entry lives Timer J and at most SWEEP_SLACK_MS more (a retransmission that late is answered too,
 * which the client, whose Timer F equals J, no longer sends). At most `max` entries: past it the oldest
 * goes first (its request, retransmitted after that, is a new request to the handler: counted in
 * `evicted`).
 */
export const SWEEP_SLACK_MS = 1000;
/** Default bound: Timer J's 32 s at 4,000 completed requests a second. */
export const DEFAULT_MAX_COMPLETED_FINALS = 131_072;

export class CompletedFinals<R> {
  readonly #entries = new Map<string, R>();
  /**
   * The keys in the Map's order and their expiry times, from `#head` on: a sweep deletes by key from
   * here, not by iterating the Map (whose iterator walks every slot deleted since its last rehash).
   */
  #keys: string[] = [];
  #until: number[] = [];
  #head = 0;
  #sweep: TimerHandle | undefined;
  #evicted = 0;

  constructor(
    private readonly clock: Clock,
    /** Timer J. */
    private readonly holdMs: number,
    private readonly max: number = DEFAULT_MAX_COMPLETED_FINALS,
  ) {
    if (!(max >= 1)) throw new RangeError('completed finals: max must be at least 1');
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Entries dropped before their time because the table was full. */
  get evicted(): number {
    return this.#evicted;
  }

  get(key: string): R | undefined {
    return this.#entries.get(key);
  }

  /** `key` must share no storage with a message's text (detachString): it is kept for Timer J. */
  add(key: string, final: R): void {
    const entries = this.#entries;
    const before = entries.size;
    entries.set(key, final);
    // an existing key keeps its place in the Map, and its expiry (never the case from the layer: a
    // request whose key is here is a retransmission, answered from here, no new transaction)
    if (entries.size === before) return;
    this.#keys.push(key);
    this.#until.push(this.clock.now() + this.holdMs);
    if (entries.size > this.max) {
      this.#dropOldest();
      this.#evicted++;
    }
    this.#sweep ??= this.clock.setTimeout(() => this.#onSweep(), this.holdMs + SWEEP_SLACK_MS);
  }

  /** Everything forgotten, the timer cleared (stack close). */
  clear(): void {
    if (this.#sweep !== undefined) this.clock.clearTimeout(this.#sweep);
    this.#sweep = undefined;
    this.#entries.clear();
    this.#keys = [];
    this.#until = [];
    this.#head = 0;
  }

  #onSweep(): void {
    this.#sweep = undefined;
    const now = this.clock.now();
    const until = this.#until;
    const keys = this.#keys;
    let head = this.#head;
    while (head < until.length && (until[head] as number) <= now) this.#entries.delete(keys[head++] as string);
    this.#head = head;
    this.#compact();
    if (this.#entries.size > 0) {
      // the next sweep takes whatever expires within SWEEP_SLACK_MS of the oldest: one timer per second at most
      this.#sweep = this.clock.setTimeout(() => this.#onSweep(), (this.#until[this.#head] as number) - now + SWEEP_SLACK_MS);
    }
  }

  #dropOldest(): void {
    this.#entries.delete(this.#keys[this.#head++] as string);
    this.#compact();
  }

  /** The expiry queue's consumed front cut off once it is half the array. */
  #compact(): void {
    const head = this.#head;
    if (this.#entries.size === 0) {
      this.#keys = [];
      this.#until = [];
      this.#head = 0;
    } else if (head >= 1024 && head * 2 >= this.#until.length) {
      this.#keys = this.#keys.slice(head);
      this.#until = this.#until.slice(head);
      this.#head = 0;
    }
  }
}
