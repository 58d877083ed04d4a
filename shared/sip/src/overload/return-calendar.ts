// When the devices told to come back later (503 + Retry-After, register-shedding.ts) will come: a count per
// second over the next `horizonSec` seconds, kept in a ring of that many buckets and nothing else, so its
// memory is fixed whatever the storm (SPEC SEC-3: every queue bounded). Pure: the shedder's clock moves it.

export class ReturnCalendar {
  /** Devices due in each second: second `s` in slot `s % length`, for s in [now, now + horizonSec]. */
  readonly #due: Uint32Array;
  #nowSec = 0;
  #total = 0;
  /**
   * A hint for firstWithRoom, an absolute second: every bucket from the search start up to it was full
   * at `#cursorRoom`. Buckets only fill until they expire, so it stays true until the room grows.
   */
  #cursor = 0;
  #cursorRoom = 0;

  constructor(horizonSec: number) {
    this.#due = new Uint32Array(Math.max(0, Math.floor(horizonSec)) + 1);
  }

  /** The farthest offset a booking may take, s. */
  get horizonSec(): number {
    return this.#due.length - 1;
  }

  /** Devices due from now on. */
  get total(): number {
    return this.#total;
  }

  /** Moves the calendar to second `sec` (never back): the seconds gone by are emptied for reuse. */
  advanceTo(sec: number): void {
    const to = Math.floor(sec);
    if (to <= this.#nowSec) return;
    const gone = Math.min(to - this.#nowSec, this.#due.length);
    for (let i = 0; i < gone; i++) {
      const slot = (this.#nowSec + i) % this.#due.length;
      this.#total -= this.#due[slot] ?? 0;
      this.#due[slot] = 0;
    }
    this.#nowSec = to;
  }

  /** Devices due `offsetSec` seconds from now (0 outside the horizon). */
  dueAt(offsetSec: number): number {
    if (offsetSec < 0 || offsetSec > this.horizonSec) return 0;
    return this.#due[(this.#nowSec + offsetSec) % this.#due.length] ?? 0;
  }

  /** One more device due `offsetSec` seconds from now (clamped to the horizon). */
  book(offsetSec: number): void {
    const offset = Math.min(this.horizonSec, Math.max(0, Math.floor(offsetSec)));
    const slot = (this.#nowSec + offset) % this.#due.length;
    this.#due[slot] = (this.#due[slot] ?? 0) + 1;
    this.#total++;
  }

  /** The earliest offset in [fromSec, toSec] whose second has fewer than `room` devices due, else undefined. */
  firstWithRoom(fromSec: number, toSec: number, room: number): number | undefined {
    if (room > this.#cursorRoom) this.#cursor = 0;
    this.#cursorRoom = room;
    const last = Math.min(toSec, this.horizonSec);
    for (let offset = Math.max(fromSec, this.#cursor - this.#nowSec); offset <= last; offset++) {
      if (this.dueAt(offset) < room) {
        this.#cursor = this.#nowSec + offset;
        return offset;
      }
    }
    this.#cursor = this.#nowSec + last + 1;
    return undefined;
  }
}
