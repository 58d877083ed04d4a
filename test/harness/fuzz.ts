// Input generators for fuzzing (STYLE §10), shared by every package's fuzz tests and the fuzz bench
// (test/bench/fuzz.ts) so a mutation strategy lives in one place. Pure and deterministic: a seeded PRNG
// drives everything, so a failure reproduces from its seed. No package of ours is imported.

/** mulberry32: small, fast, good enough to drive mutations reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- SIP messages (line-oriented text protocols): shared/sip/test/fuzz-sip.test.ts ----

export const SIP_TOKENS = [
  '<', '>', '"', '\\', ';', ',', '@', ':', '[', ']', '%', '=', '?', '&', '*', ' ', '\t', '\r', '\n', '\r\n', '\r\n ',
  '\r\n\r\n', 'sip:', 'tel:', 'SIP/2.0', ';tag=', ';branch=z9hG4bK', ';rport', 'Content-Length: ', 'l: ', 'Via: ',
  'v: SIP/2.0/UDP [::1]:5060', 'Contact: *', 'Digest ', 'nonce="', 'qop=auth', '\x00', '\xff', '\xe6\x91\x84',
];
export const SIP_NUMBERS = ['99999999999999999999', '-1', '4294967296', '2147483648', '0', '000000000000000000001', 'NaN', '1e9', '65536', ''];

/** 1–4 rounds of byte, token, line and splice mutations of a SIP message (CRLF-structured text). */
export function mutateSip(src: Buffer, rnd: () => number, corpus: Buffer[]): Buffer {
  let b = Buffer.from(src);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const at = (): number => Math.floor(rnd() * (b.length + 1));
  const rounds = 1 + Math.floor(rnd() * 4);
  for (let r = 0; r < rounds; r++) {
    switch (Math.floor(rnd() * 12)) {
      case 0: // bit flip
        if (b.length > 0) b[Math.floor(rnd() * b.length)]! ^= 1 << Math.floor(rnd() * 8);
        break;
      case 1: // random byte
        if (b.length > 0) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
        break;
      case 2: { // insert a syntax-significant token
        const i = at();
        b = Buffer.concat([b.subarray(0, i), Buffer.from(pick(SIP_TOKENS), 'latin1'), b.subarray(i)]);
        break;
      }
      case 3: { // delete a range
        const i = at();
        b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1 + Math.floor(rnd() * 16))]);
        break;
      }
      case 4: // truncate
        b = b.subarray(0, at());
        break;
      case 5: { // duplicate a header line, possibly many times
        const lines = b.toString('latin1').split('\r\n');
        const i = 1 + Math.floor(rnd() * Math.max(1, lines.length - 1));
        const copies = rnd() < 0.03 ? 200 : 1 + Math.floor(rnd() * 3);
        lines.splice(i, 0, ...Array<string>(copies).fill(lines[i] ?? ''));
        b = Buffer.from(lines.join('\r\n'), 'latin1');
        break;
      }
      case 6: { // replace a run of digits with an extreme number
        const s = b.toString('latin1');
        const digits = [...s.matchAll(/\d+/g)];
        if (digits.length === 0) break;
        const m = pick(digits);
        b = Buffer.from(s.slice(0, m.index) + pick(SIP_NUMBERS) + s.slice(m.index + m[0].length), 'latin1');
        break;
      }
      case 7: { // swap two lines
        const lines = b.toString('latin1').split('\r\n');
        const i = Math.floor(rnd() * lines.length);
        const j = Math.floor(rnd() * lines.length);
        [lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? ''];
        b = Buffer.from(lines.join('\r\n'), 'latin1');
        break;
      }
      case 8: // CRLF -> LF everywhere
        b = Buffer.from(b.toString('latin1').replaceAll('\r\n', '\n'), 'latin1');
        break;
      case 9: { // repeat a chunk, sometimes 2000 times (size blow-up: must stay linear)
        const i = Math.floor(rnd() * b.length);
        const chunk = b.subarray(i, i + 1 + Math.floor(rnd() * 8));
        const times = rnd() < 0.05 ? 2000 : 1 + Math.floor(rnd() * 50);
        b = Buffer.concat([b.subarray(0, i), ...Array<Buffer>(times).fill(chunk), b.subarray(i)]);
        break;
      }
      case 10: { // splice with another message
        const other = pick(corpus);
        b = Buffer.concat([b.subarray(0, at()), other.subarray(Math.floor(rnd() * other.length))]);
        break;
      }
      default: { // random bytes
        const i = at();
        const junk = Buffer.alloc(1 + Math.floor(rnd() * 8));
        for (let k = 0; k < junk.length; k++) junk[k] = Math.floor(rnd() * 256);
        b = Buffer.concat([b.subarray(0, i), junk, b.subarray(i)]);
      }
    }
  }
  return b;
}

// ---- markup and line bodies (MANSCDP XML, SDP, MANSRTSP): shared/gb28181/test/fuzz-manscdp.test.ts ----

export const MARKUP_TOKENS = [
  '<', '>', '&', '&amp;', '&#0;', '&#x110000;', '&lt;', '"', "'", ']]>', '<![CDATA[', '<!--', '-->', '<?xml version="1.0"?>',
  '<!DOCTYPE a>', '<!ENTITY x "y">', '&x;', '<Item>', '</Item>', '<Item/>', '<DeviceList Num="2">', '<SumNum>', '</SumNum>',
  'encoding="GBK"', 'encoding="UTF-8"', '<CmdType>Catalog</CmdType>', '<SN>1</SN>', '<__proto__>', '<constructor/>',
  '<Info>', '</Info>', '\0', '\r\n', ' ', 'y=0100000001', 'f=v/2/4///a///', 'm=video 0 RTP/AVP 96', 'a=rtpmap:96 PS/90000',
  'c=IN IP4 1.2.3.4', 't=1 2', 'Range: npt=', 'Scale: ', 'CSeq: 1', '\uFFFD', '中', '\u{1F600}',
];
export const MARKUP_BYTES = [0x00, 0xff, 0x3c, 0x3e, 0x26, 0x22, 0x80, 0xa1, 0xd6, 0xe4, 0x0a, 0x0d];

/** 1–4 rounds of byte, token, tag/line duplication, splice and growth mutations of a body. */
export function mutateMarkup(input: Buffer, rnd: () => number, pool: readonly Buffer[]): Buffer {
  let buf = input;
  const int = (n: number): number => Math.floor(rnd() * n);
  const steps = 1 + int(4);
  for (let s = 0; s < steps; s++) {
    const at = int(buf.length + 1);
    switch (int(9)) {
      case 0: { // bit flips
        buf = Buffer.from(buf);
        for (let i = 0, n = 1 + int(8); i < n && buf.length > 0; i++) {
          const j = int(buf.length);
          buf[j] = (buf[j] as number) ^ (1 << int(8));
        }
        break;
      }
      case 1: // truncation
        buf = buf.subarray(0, at);
        break;
      case 2: // token insertion
        buf = Buffer.concat([buf.subarray(0, at), Buffer.from(MARKUP_TOKENS[int(MARKUP_TOKENS.length)] as string), buf.subarray(at)]);
        break;
      case 3: { // random bytes insertion
        const junk = Buffer.from(Array.from({ length: 1 + int(16) }, () => int(256)));
        buf = Buffer.concat([buf.subarray(0, at), junk, buf.subarray(at)]);
        break;
      }
      case 4: // range deletion
        buf = Buffer.concat([buf.subarray(0, at), buf.subarray(Math.min(buf.length, at + 1 + int(32)))]);
        break;
      case 5: // interesting byte overwrite
        if (buf.length > 0) {
          buf = Buffer.from(buf);
          buf[int(buf.length)] = MARKUP_BYTES[int(MARKUP_BYTES.length)] as number;
        }
        break;
      case 6: { // tag (or line) duplication
        const text = buf.toString('latin1');
        const spans = [...text.matchAll(/<([A-Za-z]+)[^<>]*>[^<]*<\/\1>|^[a-zA-Z]=.*$/gm)];
        const span = spans[int(spans.length)];
        if (span !== undefined && span.index !== undefined) {
          const end = span.index + span[0].length;
          const copies = 1 + int(3);
          buf = Buffer.concat([buf.subarray(0, end), ...Array.from({ length: copies }, () => Buffer.from(span[0], 'latin1')), buf.subarray(end)]);
        }
        break;
      }
      case 7: { // splice with another seed
        const other = pool[int(pool.length)] as Buffer;
        buf = Buffer.concat([buf.subarray(0, at), other.subarray(int(other.length + 1))]);
        break;
      }
      default: { // chunk repetition (growth, sometimes past the size limits)
        const len = 1 + int(64);
        const chunk = buf.subarray(at, at + len);
        buf = Buffer.concat([buf.subarray(0, at), ...Array.from({ length: 1 + int(200) }, () => chunk), buf.subarray(at)]);
      }
    }
  }
  return buf;
}

// ---- JSON values (ZLM hooks, control API bodies): shared/media/test/hooks-fuzz.test.ts ----

/** A random JSON-like value of at most 3 levels, object keys drawn from `keys`, `primary` a likely string. */
export function randomJson(rnd: () => number, keys: readonly string[], primary: string, depth = 0): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const r = rnd();
  if (r < 0.15) return primary;
  if (r < 0.3) return Math.floor(rnd() * 2 ** 33) - 2 ** 32;
  if (r < 0.4) return rnd() < 0.5;
  if (r < 0.5) return null;
  if (r < 0.6) return String(Math.floor(rnd() * 1e12));
  if (r < 0.7 && depth < 3) return Array.from({ length: Math.floor(rnd() * 3) }, () => randomJson(rnd, keys, primary, depth + 1));
  if (r < 0.85 && depth < 3) return randomObject(rnd, keys, primary, depth + 1);
  return undefined;
}

/** A random object of up to 7 keys drawn from `keys` (prototype-polluting names included by callers). */
export function randomObject(rnd: () => number, keys: readonly string[], primary: string, depth = 0): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 8) }, () => [keys[Math.floor(rnd() * keys.length)] as string, randomJson(rnd, keys, primary, depth)]));
}
