/**
 * Longest-prefix index on digit strings (OpenSIPS drouting matches rule prefixes the same way; GB/T 28181
 * codes start with administrative region digits: province 2, city 4, district 6 …).
 *
 * Layout, chosen for a million rules (figures in docs/routing.md): no string and no object per rule. A digit
 * prefix of length L ≤ 24 is encoded as two doubles, `hi` = its first 12 digits as an integer and
 * `lo` = the next 12 digits as an integer times 32 plus L (both < 2^53, exact). Keys live in one
 * open-addressing table of typed arrays sized once (load ≤ 0.5, linear probing), so building never rehashes
 * and a lookup allocates nothing: encode the key's prefixes in one pass, then probe only the lengths that
 * some rule uses, longest first.
 */
import { fmix32 } from './hash.ts';

export const MAX_PREFIX_DIGITS = 24;
const HALF = 12;
const TWO32 = 4294967296;

/** Scratch for one lookup's encodings (lookups are synchronous: one set of scratch arrays suffices). */
const scratchHi = new Float64Array(MAX_PREFIX_DIGITS + 1);
const scratchLo = new Float64Array(MAX_PREFIX_DIGITS + 1);

export function isDigitPrefix(p: string): boolean {
  if (p.length > MAX_PREFIX_DIGITS) return false;
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function slot(hi: number, lo: number, mask: number): number {
  const h = (hi >>> 0) ^ Math.imul(Math.floor(hi / TWO32), 0x27d4eb2f) ^ Math.imul(lo >>> 0, 0x165667b1) ^ Math.imul(Math.floor(lo / TWO32), 0x9e3779b1);
  return fmix32(h) & mask;
}

function encode(p: string): [number, number] {
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < p.length; i++) {
    const d = p.charCodeAt(i) - 48;
    if (i < HALF) hi = hi * 10 + d;
    else lo = lo * 10 + d;
  }
  return [hi, lo * 32 + p.length];
}

/** Mutable while building; `freeze()` ends the build. */
export class PrefixIndexBuilder {
  readonly #hi: Float64Array;
  readonly #lo: Float64Array;
  readonly #val: Int32Array;
  readonly #mask: number;
  #lengths = 0; // bit L set when some key has length L (L ≤ 24)
  #count = 0;

  /** `capacityHint`: how many distinct keys at most; the table is sized for it once. */
  constructor(capacityHint: number) {
    let cap = 16;
    while (cap < capacityHint * 2) cap *= 2;
    this.#hi = new Float64Array(cap);
    this.#lo = new Float64Array(cap).fill(-1); // -1 never encodes a key (lo ≥ 0): marks an empty slot
    this.#val = new Int32Array(cap);
    this.#mask = cap - 1;
  }

  /** The value stored for `prefix`, or -1. */
  get(prefix: string): number {
    const [hi, lo] = encode(prefix);
    for (let s = slot(hi, lo, this.#mask); ; s = (s + 1) & this.#mask) {
      if (this.#lo[s] === -1) return -1;
      if (this.#lo[s] === lo && this.#hi[s] === hi) return this.#val[s]!;
    }
  }

  /** Sets the value for `prefix` (a digit string, checked by the caller with isDigitPrefix). */
  set(prefix: string, value: number): void {
    const [hi, lo] = encode(prefix);
    for (let s = slot(hi, lo, this.#mask); ; s = (s + 1) & this.#mask) {
      if (this.#lo[s] === -1) {
        if (this.#count * 2 >= this.#mask + 1) throw new RangeError('prefix index over capacity');
        this.#hi[s] = hi;
        this.#lo[s] = lo;
        this.#val[s] = value;
        this.#count++;
        this.#lengths |= 1 << prefix.length;
        return;
      }
      if (this.#lo[s] === lo && this.#hi[s] === hi) {
        this.#val[s] = value;
        return;
      }
    }
  }

  freeze(): PrefixIndex {
    const lengths: number[] = [];
    for (let l = MAX_PREFIX_DIGITS; l >= 0; l--) if ((this.#lengths & (1 << l)) !== 0) lengths.push(l);
    return new PrefixIndex(this.#hi, this.#lo, this.#val, this.#mask, Uint8Array.from(lengths), this.#count);
  }
}

export class PrefixIndex {
  constructor(
    private readonly hi: Float64Array,
    private readonly lo: Float64Array,
    private readonly val: Int32Array,
    private readonly mask: number,
    /** Key lengths present, longest first. */
    readonly lengthsDesc: Uint8Array,
    readonly size: number,
  ) {}

  /** Bytes held by the typed arrays. */
  get bytes(): number {
    return this.hi.byteLength + this.lo.byteLength + this.val.byteLength;
  }

  /**
   * Encodes the prefixes of `key` (its digits up to the first non-digit, at most 24) into scratch space
   * shared by every index, and returns how many digits it has. Then `valueAt(length)` for each length of
   * `lengthsDesc` up to that count, before preparing another key. No closure, no allocation: the hot path.
   */
  static prepare(key: string): number {
    let n = 0;
    let hi = 0;
    let lo = 0;
    scratchHi[0] = 0;
    scratchLo[0] = 0;
    const max = key.length < MAX_PREFIX_DIGITS ? key.length : MAX_PREFIX_DIGITS;
    while (n < max) {
      const d = key.charCodeAt(n) - 48;
      if (d < 0 || d > 9) break;
      if (n < HALF) hi = hi * 10 + d;
      else lo = lo * 10 + d;
      n++;
      scratchHi[n] = hi;
      scratchLo[n] = lo * 32 + n;
    }
    return n;
  }

  /** Value stored for the prepared key's prefix of `length` digits, or -1. */
  valueAt(length: number): number {
    return this.#find(scratchHi[length]!, scratchLo[length]!);
  }

  #find(hi: number, lo: number): number {
    const keysLo = this.lo;
    for (let s = slot(hi, lo, this.mask); ; s = (s + 1) & this.mask) {
      const k = keysLo[s]!;
      if (k === -1) return -1;
      if (k === lo && this.hi[s] === hi) return this.val[s]!;
    }
  }
}
