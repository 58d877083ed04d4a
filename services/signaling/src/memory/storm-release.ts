// When to give the heap back after a registration storm (issue 11, target 3: ≤ 2 KB per registered
// device, RSS counted once the storm's transactions have drained). Pure: counts per window in, a yes/no
// out; the timer and the collection are in heap-release.ts.
//
// Why a policy at all: during a storm every REGISTER promotes a few KB to V8's old generation (what its
// Completed transaction keeps for Timer J, RFC 3261 §17.2.2, and what waits for the store's write-behind),
// so the old generation grows to several times its live size (V8's heap growing factor goes up to 4).
// V8's memory reducer would give that back once idle, but it starts only when its allocation-rate
// estimate reads "low", and that estimate averages over the last collections, all of them from the
// storm: with no collection after the storm, it read "high alloc" for 100 s at 100,000 devices until its
// watchdog started one (--trace-gc-verbose, docs/benchmarks.md § memory-per-device). So the instance,
// which knows when its storm is over, asks for the collections itself, twice per storm: a few seconds
// into the calm (the storm's garbage; its last Completed transactions still live, in pages compacted
// dense), and once they have ended (Timer J: those pages are then empty and unmapped at once).
import { T1 } from '@vms/sip';

export interface StormReleasePolicy {
  /** Registrations since the last release for there to be anything worth giving back. */
  readonly minRegistrations: number;
  /** A window is calm when it counts at most this fraction of the busiest window since the last release. */
  readonly calmFraction: number;
  /** Calm this long before the first release: the storm's garbage, compacted while the instance is quiet. */
  readonly earlyMs: number;
  /** Calm this long before the second: the storm's last transactions have ended (Timer J), their memory too. */
  readonly quietMs: number;
  /** At most one release per this long (a full collection pauses the event loop). */
  readonly minIntervalMs: number;
}

/** RFC 3261 §17.2.2: Timer J = 64·T1 for UDP, the longest a storm's Completed REGISTER transaction lives. */
const TIMER_J_MS = 64 * T1;

export const DEFAULT_STORM_RELEASE: StormReleasePolicy = {
  // ~5,000 × a few KB promoted: tens of MB worth a collection of a few hundred ms
  minRegistrations: 5000,
  // steady re-registration (devices / Expires, e.g. 278/s for 1,000,000 devices at 3600 s) after a storm
  // at thousands per second is calm; the same steady rate on its own never is
  calmFraction: 0.1,
  earlyMs: 3000,
  // the calm is counted from the end of its first window, when the storm's busy windows had all ended:
  // their transactions have ended Timer J later
  quietMs: TIMER_J_MS,
  minIntervalMs: 60_000,
};

export class StormRelease {
  readonly #p: StormReleasePolicy;
  #total = 0;
  #peak = 0;
  #calmSince: number | null = null;
  #early = false;
  #lastRelease = -Infinity;

  constructor(policy: StormReleasePolicy = DEFAULT_STORM_RELEASE) {
    this.#p = policy;
  }

  /**
   * One window ending at `now` counted `registrations`. True when the heap should be given back now:
   * twice per storm, `earlyMs` and `quietMs` into the calm after it; after the second the storm is
   * forgotten (the next release needs a new storm).
   */
  observe(now: number, registrations: number): boolean {
    this.#total += registrations;
    if (registrations > this.#peak) this.#peak = registrations;
    if (registrations > this.#peak * this.#p.calmFraction) {
      this.#calmSince = null;
      this.#early = false;
      return false;
    }
    this.#calmSince ??= now;
    if (this.#total < this.#p.minRegistrations || now - this.#lastRelease < this.#p.minIntervalMs) return false;
    const calm = now - this.#calmSince;
    if (calm >= this.#p.quietMs) {
      this.#total = 0;
      this.#peak = 0;
      this.#calmSince = null;
      this.#early = false;
      this.#lastRelease = now;
      return true;
    }
    if (this.#early || calm < this.#p.earlyMs) return false;
    this.#early = true;
    return true;
  }
}
