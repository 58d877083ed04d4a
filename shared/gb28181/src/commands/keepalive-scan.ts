/**
 * A validating pre-scan for the one MANSCDP body that arrives at fleet rate: the Keepalive Notify
 * (GB/T 28181-2016 §9.6, §A.2.5), one per device per minute. The full codec (charset detection,
 * XML validation and parse, tree walk) costs more than everything else on the keepalive path
 * together; this scan reads the common shapes in one pass without allocating a tree.
 *
 * It accepts only a body that is certainly well-formed and that the full codec decodes to exactly
 * `Notify/Keepalive` with the same SN, DeviceID and Status and the same detected charset:
 *
 *   [ws] [<?xml version="1.0" [encoding="label"]?>] [ws] <Notify> [ws]
 *     <CmdType>Keepalive</CmdType> <SN>digits</SN> <DeviceID>id</DeviceID> [<Status>word</Status>]
 *     (any order, each once, whitespace between) [ws] </Notify> [ws or NUL]
 *
 * Everything else — other spellings (`keepalive`, `<notify>`), attributes, whitespace inside a value,
 * entities, `<Info>`, comments, non-ASCII bytes, a BOM, a truncated or oversized body — returns
 * undefined, and the caller must take the full codec, which decides. So this is a shortcut, never a
 * second interpretation; test/keepalive-scan.test.ts holds it against parseManscdp.
 */
import { normalizeCharset, type ManscdpCharset } from '../charset.ts';

export interface ScannedKeepalive {
  readonly sn: string;
  readonly deviceId: string;
  /** `OK` / `ERROR` as sent; absent when the device left it out. */
  readonly status: string | undefined;
  /** The charset the full codec would report (declared label, else UTF-8: the body is ASCII). */
  readonly charset: ManscdpCharset;
}

/** Real keepalives are 150-250 bytes (samples 03, 04); anything much larger is not the common shape. */
export const KEEPALIVE_SCAN_MAX_CHARS = 1024;
const MAX_ID = 32; // GB ids are 20 digits (18 in pre-2016 captures); bounded either way
const MAX_SN = 20;
const MAX_STATUS = 16;

/** XML declaration as devices write it (double or single quotes, sample 04), linear and anchored. */
const DECLARATION = /<\?xml[ \t]+version=(["'])1\.0\1(?:[ \t]+encoding=(["'])([A-Za-z0-9._:-]{1,40})\2)?[ \t]*\?>/y;

/**
 * The usual body in one anchored regex, a strict subset of the shapes above: declaration as in the
 * standard's examples (GB2312 or UTF-8, both their own normal form) or none, the elements in the
 * examples' order, XML whitespace (not \s) between them, trailing whitespace or NUL to the end. One
 * compiled match costs less than the char-by-char scan below, which takes whatever this does not.
 */
const USUAL_BODY =
  /(?:<\?xml version="1\.0" encoding="(GB2312|UTF-8)"\?>)?[ \t\r\n]*<Notify>[ \t\r\n]*<CmdType>Keepalive<\/CmdType>[ \t\r\n]*<SN>([0-9]{1,20})<\/SN>[ \t\r\n]*<DeviceID>([A-Za-z0-9]{1,32})<\/DeviceID>[ \t\r\n]*(?:<Status>([A-Za-z0-9]{1,16})<\/Status>[ \t\r\n]*)?<\/Notify>[ \t\r\n\0]*$/y;

/** USUAL_BODY's bound on the SN's digits (keepalive-shape.ts keeps to it). */
export const USUAL_MAX_SN = 20;

/**
 * USUAL_BODY's match of the body in `text` from `start` to its end (groups: 1 the declared charset, 2 SN,
 * 3 DeviceID, 4 Status), or null; no length bound (scanKeepalive checks KEEPALIVE_SCAN_MAX_CHARS first).
 */
export function matchUsualKeepalive(text: string, start: number): RegExpExecArray | null {
  USUAL_BODY.lastIndex = start;
  return USUAL_BODY.exec(text);
}

const CMD_TYPE = 1;
const SN = 2;
const DEVICE_ID = 4;
const STATUS = 8;
const REQUIRED = CMD_TYPE | SN | DEVICE_ID;

/** The declaration must lie within what the codec probes for it (charset.ts, 256 bytes). */
const DECLARATION_PROBE_CHARS = 256;

/**
 * Scans `text` from `start` to its end: the body as latin1 text (one char per byte, so a non-ASCII
 * byte can never pass for an ASCII one). Undefined whenever the body is not exactly one of the
 * shapes above.
 */
export function scanKeepalive(text: string, start = 0): ScannedKeepalive | undefined {
  const end = text.length;
  if (end - start > KEEPALIVE_SCAN_MAX_CHARS) return undefined;
  const usual = matchUsualKeepalive(text, start);
  if (usual !== null) return { sn: usual[2] as string, deviceId: usual[3] as string, status: usual[4], charset: usual[1] === 'GB2312' ? 'GB2312' : 'UTF-8' };
  let i = skipSpace(text, start);
  let label: string | undefined;
  if (text.startsWith('<?', i)) {
    DECLARATION.lastIndex = i;
    const m = DECLARATION.exec(text);
    if (m === null || DECLARATION.lastIndex - start > DECLARATION_PROBE_CHARS) return undefined;
    label = m[3];
    i = skipSpace(text, DECLARATION.lastIndex);
  }
  if (!text.startsWith('<Notify>', i)) return undefined;
  i += '<Notify>'.length;

  let seen = 0;
  let sn = '';
  let deviceId = '';
  let status: string | undefined;
  for (;;) {
    i = skipSpace(text, i);
    if (text.startsWith('</Notify>', i)) break;
    const field = fieldAt(text, i);
    if (field === 0 || (seen & field) !== 0) return undefined; // unknown or repeated element
    seen |= field;
    const name = field === CMD_TYPE ? 'CmdType' : field === SN ? 'SN' : field === DEVICE_ID ? 'DeviceID' : 'Status';
    const from = i + name.length + 2; // past `<name>`
    const to = text.indexOf('<', from);
    // `</name>` right after the value; a value cannot hold `<`, so this is its only possible end.
    if (to < 0 || text.charCodeAt(to + 1) !== 47 /* / */ || !text.startsWith(name, to + 2) || text.charCodeAt(to + 2 + name.length) !== 62 /* > */) {
      return undefined;
    }
    i = to + name.length + 3;
    const length = to - from;
    if (field === CMD_TYPE) {
      if (length !== 'Keepalive'.length || !text.startsWith('Keepalive', from)) return undefined;
    } else if (field === SN) {
      if (length === 0 || length > MAX_SN || !allDigits(text, from, to)) return undefined;
      sn = text.slice(from, to);
    } else if (field === DEVICE_ID) {
      if (length === 0 || length > MAX_ID || !allAlnum(text, from, to)) return undefined;
      deviceId = text.slice(from, to);
    } else {
      if (length === 0 || length > MAX_STATUS || !allAlnum(text, from, to)) return undefined;
      status = text.slice(from, to);
    }
  }
  if ((seen & REQUIRED) !== REQUIRED) return undefined;
  // Trailing whitespace and the NUL of devices that send C strings are not part of the document (xml.ts).
  for (i += '</Notify>'.length; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0 && !isSpace(c)) return undefined;
  }
  const charset = (label === undefined ? undefined : normalizeCharset(label)) ?? 'UTF-8';
  return { sn, deviceId, status, charset };
}

/** The element starting at `i`, by its opening tag. */
function fieldAt(text: string, i: number): number {
  if (text.charCodeAt(i) !== 60 /* < */) return 0;
  switch (text.charCodeAt(i + 1)) {
    case 67: return text.startsWith('CmdType>', i + 1) ? CMD_TYPE : 0; // C
    case 83: return text.startsWith('SN>', i + 1) ? SN : text.startsWith('Status>', i + 1) ? STATUS : 0; // S
    case 68: return text.startsWith('DeviceID>', i + 1) ? DEVICE_ID : 0; // D
    default: return 0;
  }
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAlnum = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 122);

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

// One loop per class rather than one taking the test as a function: a call per char otherwise.
function allDigits(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return true;
}

function allAlnum(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isAlnum(text.charCodeAt(i))) return false;
  return true;
}
