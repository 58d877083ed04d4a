// Bounds (SPEC SEC-3 for the edge): a global token bucket (the edge's ceiling: past it new requests are
// answered 503 + Retry-After statelessly and the edge stays responsive) and one per source address (one
// device or NAT cannot take the ceiling), the per-address table itself bounded. Pure: time passed in.

export interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBucket {
  #tokens: number;
  #at: number;

  constructor(
    readonly ratePerSec: number,
    readonly burst: number,
    now: number,
  ) {
    this.#tokens = burst;
    this.#at = now;
  }

  take(now: number): boolean {
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) * this.ratePerSec) / 1000);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** Per-address buckets, at most `maxAddresses` remembered (the oldest forgotten first: a full bucket again). */
export class AddressBuckets {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    readonly ratePerSec: number,
    readonly burst: number,
    readonly maxAddresses: number,
  ) {}

  take(address: string, now: number): boolean {
    let b = this.#buckets.get(address);
    if (b === undefined) {
      if (this.#buckets.size >= this.maxAddresses) {
        const oldest = this.#buckets.keys().next();
        if (oldest.done !== true) this.#buckets.delete(oldest.value);
      }
      b = { tokens: this.burst, at: now };
      this.#buckets.set(address, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) * this.ratePerSec) / 1000);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  get size(): number {
    return this.#buckets.size;
  }
}
