import type { SipMessage } from './types.ts';
import { formatUri } from './uri.ts';

// Anything outside latin1 can only have come from application code (parsed values are latin1).
const WIDE = /[^\x00-\xff]/;

/**
 * Simulators of broken peers only (services/device-sim's `countsCharacters` quirk): a body Buffer
 * carrying this symbol is announced with that Content-Length instead of its byte length. Nothing in
 * the platform sets it; RFC 3261 §20.14 counts bytes.
 */
export const MISDECLARED_CONTENT_LENGTH = Symbol('vms.sip.misdeclaredContentLength');

function announcedLength(body: Buffer): number {
  const v = (body as unknown as Record<symbol, unknown>)[MISDECLARED_CONTENT_LENGTH];
  return typeof v === 'number' ? v : body.length;
}

/**
 * Wire form of a message: CRLF line endings (RFC 3261 §7), `Name: value` per stored header line,
 * and Content-Length always rewritten from `body.length` in bytes (§20.14) — at the position of the
 * first Content-Length header, or last when there is none. The body bytes are copied verbatim.
 *
 * Header text is written latin1 so raw bytes from a parsed message go back out unchanged; a value
 * holding characters above U+00FF (typed by application code, e.g. a Chinese Subject) is written UTF-8.
 */
export function serializeSipMessage(msg: SipMessage): Buffer {
  let head = buildHead(msg, asIs);
  // as many UTF-8 bytes as characters: all ASCII, nothing wide. Counted by V8 in C++, ~1k instructions
  // against the regex's ~10 a character over a whole head (issue 11: ~5k for every 200 of a registration)
  if (Buffer.byteLength(head, 'utf8') !== head.length && WIDE.test(head)) head = buildHead(msg, toWire);
  const body = msg.body;
  const out = Buffer.allocUnsafe(head.length + body.length);
  out.write(head, 0, 'latin1');
  body.copy(out, head.length);
  return out;
}

function buildHead(msg: SipMessage, wire: (s: string) => string): string {
  let head =
    msg.type === 'request'
      ? `${msg.method} ${wire(formatUri(msg.uri))} SIP/2.0\r\n`
      : `SIP/2.0 ${msg.status} ${wire(msg.reason)}\r\n`;
  let lengthWritten = false;
  for (const [name, value] of msg.headers.entries()) {
    if (name === 'Content-Length') {
      if (!lengthWritten) head += `Content-Length: ${announcedLength(msg.body)}\r\n`;
      lengthWritten = true;
    } else {
      head += `${name}: ${wire(value)}\r\n`;
    }
  }
  if (!lengthWritten) head += `Content-Length: ${announcedLength(msg.body)}\r\n`;
  return `${head}\r\n`;
}

const asIs = (s: string): string => s;
/** UTF-8 bytes of `s` as a latin1 string, only when `s` has characters latin1 cannot hold. */
const toWire = (s: string): string => (WIDE.test(s) ? Buffer.from(s, 'utf8').toString('latin1') : s);
