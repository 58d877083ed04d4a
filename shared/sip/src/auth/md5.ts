// MD5 (RFC 1321) of a short text whose characters are single bytes, in JavaScript (issue 11: a digest
// check is three MD5s of 40-130 bytes; through `crypto.hash` each cost ~4.6k instructions, nearly all
// of it OpenSSL's per-call set-up — context, provider fetch, finalization — for one or two blocks of
// work). Used only where the caller knows every character is below 0x80, so the text's bytes are its
// UTF-8 and latin1 bytes alike; digest.compute.test holds it to node:crypto on random inputs.

/** Per-round shift amounts (RFC 1321 §3.4). */
const S = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21];
/** floor(abs(sin(i + 1)) × 2^32), as signed 32-bit integers. */
const K = new Int32Array(64);
for (let i = 0; i < 64; i++) K[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0;
const SHIFT = new Int32Array(S);
/** Message words of the padded text, grown as needed (little-endian 32-bit words). */
let words = new Int32Array(64);
/** Every byte's two hex digits. */
const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Lower-case hex MD5 of `text`, every character of which is below 0x80 (the caller checks). */
export function md5HexOfAscii(text: string): string {
  const n = text.length;
  const blocks = ((n + 8) >>> 6) + 1;
  const count = blocks * 16;
  if (words.length < count) words = new Int32Array(count * 2);
  const w = words;
  w.fill(0, 0, count);
  for (let i = 0; i < n; i++) w[i >> 2] |= text.charCodeAt(i) << ((i & 3) << 3);
  w[n >> 2] |= 0x80 << ((n & 3) << 3);
  w[count - 2] = n << 3; // length in bits (texts here are far below 2^29 bytes)
  let a0 = 0x67452301;
  let b0 = 0xefcdab89 | 0;
  let c0 = 0x98badcfe | 0;
  let d0 = 0x10325476;
  for (let base = 0; base < count; base += 16) {
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const t = d;
      d = c;
      c = b;
      const x = (a + f + (K[i] as number) + (w[base + g] as number)) | 0;
      const s = SHIFT[i] as number;
      b = (b + ((x << s) | (x >>> (32 - s)))) | 0;
      a = t;
    }
    a0 = (a0 + a) | 0;
    b0 = (b0 + b) | 0;
    c0 = (c0 + c) | 0;
    d0 = (d0 + d) | 0;
  }
  return hexLe(a0) + hexLe(b0) + hexLe(c0) + hexLe(d0);
}

/** A word's four bytes, lowest first, as hex. */
function hexLe(v: number): string {
  return (BYTE_HEX[v & 0xff] as string) + (BYTE_HEX[(v >>> 8) & 0xff] as string) + (BYTE_HEX[(v >>> 16) & 0xff] as string) + (BYTE_HEX[v >>> 24] as string);
}
