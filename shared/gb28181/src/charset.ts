/**
 * Charset handling for MANSCDP bodies (Annex A). The standard's examples declare GB2312; UTF-8 is
 * just as common in the field, and what arrives on the wire is messier still:
 *  - a declaration naming GB2312 over bytes that are really UTF-8 (simulators that build the XML
 *    string in UTF-8 and paste a GB2312 declaration on top, sample 06);
 *  - no declaration at all, or `<?xml version="1.0"?>` without encoding (Hikvision, sample 03);
 *  - GBK-only characters (common in names) under a GB2312 label.
 * Decoding therefore trusts the bytes before the label: valid multi-byte UTF-8 is UTF-8 whatever the
 * declaration says (GB-encoded Chinese text almost never forms valid UTF-8 sequences), everything else
 * non-ASCII is decoded as GB18030, the superset of GB2312 and GBK.
 */
import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import { GbCharsetError } from './errors.ts';

export type ManscdpCharset = 'UTF-8' | 'GB2312' | 'GBK' | 'GB18030';

export interface DecodedBody {
  text: string;
  /** The charset the bytes were actually in (for pure ASCII: the declared one, else UTF-8). */
  charset: ManscdpCharset;
  /** The raw `encoding="..."` label of the XML declaration, when there is one. */
  declared?: string;
  /** True when the bytes contradict the declared label (e.g. UTF-8 bytes declared GB2312). */
  mismatch: boolean;
}

/** The XML declaration sits at the very start; a bounded probe is enough to find it. */
const DECLARATION_PROBE_BYTES = 256;
const DECLARATION_RE = /^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]{1,40})["']/i;
const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

const CHARSET_ALIASES: Readonly<Record<string, ManscdpCharset>> = {
  'utf-8': 'UTF-8',
  utf8: 'UTF-8',
  gb2312: 'GB2312',
  'gb_2312-80': 'GB2312',
  'euc-cn': 'GB2312',
  gbk: 'GBK',
  'x-gbk': 'GBK',
  cp936: 'GBK',
  gb18030: 'GB18030',
};

/** Maps a charset label (any case, common aliases) to the charsets this package speaks. */
export function normalizeCharset(label: string): ManscdpCharset | undefined {
  return CHARSET_ALIASES[label.trim().toLowerCase()];
}

/** The `encoding` label of the XML declaration at the start of `bytes`, if any. */
export function declaredEncoding(bytes: Uint8Array): string | undefined {
  const probe = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, DECLARATION_PROBE_BYTES));
  const head = skipBom(probe).toString('latin1');
  return DECLARATION_RE.exec(head)?.[1];
}

export function decodeBody(input: Uint8Array): DecodedBody {
  const raw = Buffer.from(input.buffer, input.byteOffset, input.length);
  if (raw.length >= 2 && ((raw[0] === 0xfe && raw[1] === 0xff) || (raw[0] === 0xff && raw[1] === 0xfe))) {
    throw new GbCharsetError('UTF-16 bodies are not supported');
  }
  const hasBom = startsWithUtf8Bom(raw);
  const bytes = skipBom(raw);
  const declared = declaredEncoding(bytes);
  const declaredCharset = declared === undefined ? undefined : normalizeCharset(declared);
  const withDeclared = (d: DecodedBody): DecodedBody => (declared === undefined ? d : { ...d, declared });

  if (!hasBom && isAscii(bytes)) {
    return withDeclared({ text: bytes.toString('latin1'), charset: declaredCharset ?? 'UTF-8', mismatch: false });
  }
  if (isUtf8(bytes)) {
    const mismatch = declared !== undefined && declaredCharset !== 'UTF-8';
    return withDeclared({ text: bytes.toString('utf8'), charset: 'UTF-8', mismatch });
  }
  if (hasBom) throw new GbCharsetError('UTF-8 byte order mark over invalid UTF-8');
  const text = iconv.decode(bytes, 'gb18030');
  if (text.includes('\uFFFD')) throw new GbCharsetError('bytes are neither UTF-8 nor GB18030');
  const isGbLabel = declaredCharset !== undefined && declaredCharset !== 'UTF-8';
  return withDeclared({ text, charset: isGbLabel ? declaredCharset : 'GBK', mismatch: !isGbLabel && declared !== undefined });
}

/**
 * Encodes `text` for the wire. GB2312 and GBK both use the GBK table: receivers that announce GB2312
 * decode it as GBK in practice (the WHATWG Encoding Standard maps the label `gb2312` to GBK), and
 * names with GBK-only characters must still reach them. Characters with no representation at all
 * raise GB_ERR_CHARSET instead of being silently replaced with '?'.
 */
export function encodeText(text: string, charset: ManscdpCharset): Buffer {
  if (isAsciiString(text)) return Buffer.from(text, 'latin1');
  if (charset === 'UTF-8') {
    const out = Buffer.from(text, 'utf8');
    if (out.toString('utf8') !== text) throw new GbCharsetError('text is not well-formed Unicode');
    return out;
  }
  const codec = charset === 'GB18030' ? 'gb18030' : 'gbk';
  const out = iconv.encode(text, codec);
  if (iconv.decode(out, codec) !== text) throw new GbCharsetError('text not representable in the target charset');
  return out;
}

export function xmlDeclaration(charset: ManscdpCharset): string {
  return `<?xml version="1.0" encoding="${charset}"?>`;
}

function startsWithUtf8Bom(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === UTF8_BOM[0] && bytes[1] === UTF8_BOM[1] && bytes[2] === UTF8_BOM[2];
}

function skipBom(bytes: Buffer): Buffer {
  return startsWithUtf8Bom(bytes) ? bytes.subarray(UTF8_BOM.length) : bytes;
}

function isAscii(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b >= 0x80) return false;
  return true;
}

function isAsciiString(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}
