/**
 * 32-bit hashing for decisions: stable across processes and versions (every instance must hash a key the
 * same way, or stickiness and gray-release sides would differ between instances). FNV-1a over UTF-16 code
 * units, finished with MurmurHash3's fmix32 for avalanche.
 */

/** MurmurHash3 finalizer: a bijection on 32-bit values with full avalanche. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hashString(s: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

/** Combines a key hash with a destination's hash into an independent-looking 32-bit value. */
export function mix2(a: number, b: number): number {
  return fmix32(fmix32(a ^ Math.imul(b, 0x9e3779b1)) + b);
}
