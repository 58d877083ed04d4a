/**
 * Longest-prefix index on digit strings (OpenSIPS drouting matches rule prefixes the same way; GB/T 28181
 * codes start with administrative region digits: province 2, city 4, district 6 …).
 *
 * Layout, chosen for a million rules (figures in docs/routing.md): no string and no object per rule. A digit
 * prefix of length L ≤ 24 is encoded as two doubles, `hi` = its first 12 digits as an integer and
 * `lo` = the next 12 digits as an integer times 32 plus L plus 1 (both < 2^53, exact; lo ≥ 1, so a zeroed
 * slot is empty and a fresh table needs no initialising pass). Keys live in one
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

/** Encodes a whole digit prefix into encHi / encLo (no allocation: a million calls per build). */
let encHi = 0;
let encLo = 0;
function encode(p: string): void {
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < p.length; i++) {
    const d = p.charCodeAt(i) - 48;
    if (i < HALF) hi = hi * 10 + d;
    else lo = lo * 10 + d;
  }
  encHi = hi;
  encLo = lo * 32 + p.length + 1;
}

/**
 * The key of a digit prefix (checked with isDigitPrefix) as the two doubles the index stores, written at
 * `i` of two columns: rule loaders keep prefixes encoded so that no string per rule outlives its page.
 */
export function encodePrefixAt(p: string, his: Float64Array, los: Float64Array, i: number): void {
  encode(p);
  his[i] = encHi;
  los[i] = encLo;
}

/** Length in digits of an encoded prefix (from its `lo`). */
export function encodedLength(lo: number): number {
  return (lo % 32) - 1;
}

/**
 * Slots are interleaved in one Float64Array, three numbers each: [hi, lo, value]. One probe then reads one
 * or two neighbouring cache lines instead of three arrays far apart (building a million keys is bound by
 * cache misses, not by arithmetic). lo = 0 marks an empty slot (a real lo is ≥ 1).
 */
const STRIDE = 3;

/** Smallest power of two ≥ 16 that holds `keys` at load ≤ 0.5. */
function capacityFor(keys: number): number {
  let cap = 16;
  while (cap < keys * 2) cap *= 2;
  return cap;
}

/**
 * Mutable while building; `freeze()` ends the build. Sized once from a hint (no rehash while building when
 * the hint holds: a store knows its version's rule count), doubled when more keys come than hinted (an index
 * made before its share of the rules was known: indexes are built as the pages arrive), and shrunk at
 * freeze when the hint was far too large (load under 1/8).
 */
export class PrefixIndexBuilder {
  #slots: Float64Array;
  #mask: number;
  #lengths = 0; // bit L set when some key has length L (L ≤ 24)
  #count = 0;

  /** `capacityHint`: how many distinct keys are expected; the table is sized for it (load ≤ 0.5). */
  constructor(capacityHint: number) {
    const cap = capacityFor(capacityHint);
    this.#slots = new Float64Array(cap * STRIDE); // zeroed: every slot empty
    this.#mask = cap - 1;
  }

  /** Keys held. */
  get size(): number {
    return this.#count;
  }

  /** Makes room for one more key (call before slotOfKey: a growth moves every slot). */
  reserve(): void {
    if ((this.#count + 1) * 2 > this.#mask + 1) this.#rehash((this.#mask + 1) * 2);
  }

  /** Slot of an encoded key (encodePrefixAt): the one holding it, or the empty one where it would go. */
  slotOfKey(hi: number, lo: number): number {
    const slots = this.#slots;
    for (let s = slot(hi, lo, this.#mask); ; s = (s + 1) & this.#mask) {
      const o = s * STRIDE;
      if (slots[o + 1] === 0 || (slots[o + 1] === lo && slots[o] === hi)) return s;
    }
  }

  /** Stores `value` for the encoded key in its slot `s` (from slotOfKey(hi, lo), with no put in between). */
  putKey(s: number, hi: number, lo: number, value: number): void {
    const o = s * STRIDE;
    const slots = this.#slots;
    if (slots[o + 1] === 0) {
      if (this.#count * 2 >= this.#mask + 1) throw new RangeError('prefix index over capacity (reserve() first)');
      slots[o] = hi;
      slots[o + 1] = lo;
      this.#count++;
      this.#lengths |= 1 << encodedLength(lo);
    }
    slots[o + 2] = value;
  }

  /** Value in a slot from slotOf, or -1 when the slot is empty. */
  valueOf(s: number): number {
    const o = s * STRIDE;
    return this.#slots[o + 1] === 0 ? -1 : this.#slots[o + 2]!;
  }

  freeze(): PrefixIndex {
    return PrefixIndex.fromParts(this.freezeParts());
  }

  /** The finished index as plain data (its arrays can be transferred to another thread). */
  freezeParts(): PrefixIndexParts {
    const fit = capacityFor(this.#count);
    if (fit * 8 <= this.#mask + 1) this.#rehash(fit);
    const lengths: number[] = [];
    for (let l = MAX_PREFIX_DIGITS; l >= 0; l--) if ((this.#lengths & (1 << l)) !== 0) lengths.push(l);
    return { slots: this.#slots, mask: this.#mask, lengthsDesc: Uint8Array.from(lengths), size: this.#count };
  }

  /** Moves every key into a table of `cap` slots (a power of two holding them at load ≤ 0.5). */
  #rehash(cap: number): void {
    const old = this.#slots;
    const slots = new Float64Array(cap * STRIDE);
    const mask = cap - 1;
    for (let o = 0; o < old.length; o += STRIDE) {
      const lo = old[o + 1]!;
      if (lo === 0) continue;
      const hi = old[o]!;
      let s = slot(hi, lo, mask);
      while (slots[s * STRIDE + 1] !== 0) s = (s + 1) & mask;
      slots[s * STRIDE] = hi;
      slots[s * STRIDE + 1] = lo;
      slots[s * STRIDE + 2] = old[o + 2]!;
    }
    this.#slots = slots;
    this.#mask = mask;
  }
}

/** A built index as data: what a build thread transfers. */
export interface PrefixIndexParts {
  readonly slots: Float64Array;
  readonly mask: number;
  readonly lengthsDesc: Uint8Array;
  readonly size: number;
}

export class PrefixIndex {
  static fromParts(p: PrefixIndexParts): PrefixIndex {
    return new PrefixIndex(p.slots, p.mask, p.lengthsDesc, p.size);
  }

  constructor(
    private readonly slots: Float64Array,
    private readonly mask: number,
    /** Key lengths present, longest first. */
    readonly lengthsDesc: Uint8Array,
    readonly size: number,
  ) {}

  /** Bytes held by the typed array. */
  get bytes(): number {
    return this.slots.byteLength;
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
    scratchLo[0] = 1;
    const max = key.length < MAX_PREFIX_DIGITS ? key.length : MAX_PREFIX_DIGITS;
    while (n < max) {
      const d = key.charCodeAt(n) - 48;
      if (d < 0 || d > 9) break;
      if (n < HALF) hi = hi * 10 + d;
      else lo = lo * 10 + d;
      n++;
      scratchHi[n] = hi;
      scratchLo[n] = lo * 32 + n + 1;
    }
    return n;
  }

  /** Value stored for the prepared key's prefix of `length` digits, or -1. */
  valueAt(length: number): number {
    const hi = scratchHi[length]!;
    const lo = scratchLo[length]!;
    const slots = this.slots;
    for (let s = slot(hi, lo, this.mask); ; s = (s + 1) & this.mask) {
      const o = s * STRIDE;
      const k = slots[o + 1]!;
      if (k === 0) return -1;
      if (k === lo && slots[o] === hi) return slots[o + 2]!;
    }
  }
}
