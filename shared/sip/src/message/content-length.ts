import { SipParseError } from '../errors.ts';
import { isLws, trimLws } from './lex.ts';

/**
 * Content-Length (RFC 3261 §20.14: `1*DIGIT`, in bytes). Shared by the datagram parser and the
 * stream framer so both reject the same values: negative, non-numeric, empty, or larger than any
 * message we could hold.
 */
export const MAX_CONTENT_LENGTH = 0x7fffffff;

export function parseContentLength(values: readonly string[]): number | null {
  if (values.length === 0) return null;
  let result = -1;
  for (const raw of values) {
    const v = trimLws(raw);
    if (v.length === 0 || v.length > 10) throw clError(raw);
    let n = 0;
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c < 48 || c > 57) throw clError(raw);
      n = n * 10 + c - 48;
    }
    if (n > MAX_CONTENT_LENGTH) throw clError(raw);
    // Two different lengths make framing ambiguous (request smuggling); equal duplicates are harmless.
    if (result !== -1 && n !== result) throw clError(values.join(', '));
    result = n;
  }
  return result;
}

/**
 * Content-Length values found in a raw header section (latin1 text, CRLF or LF lines), for the
 * stream framer which must size the body before anything is parsed. Matches `Content-Length` and
 * its compact form `l` (RFC 3261 §7.3.3), case-insensitively, with optional LWS before the colon.
 */
export function scanContentLength(head: string): number | null {
  const values: string[] = [];
  let pos = 0;
  while (pos < head.length) {
    let nl = head.indexOf('\n', pos);
    if (nl === -1) nl = head.length;
    const colon = head.indexOf(':', pos);
    if (colon !== -1 && colon < nl) {
      let nameEnd = colon;
      while (nameEnd > pos && isLws(head.charCodeAt(nameEnd - 1))) nameEnd--;
      const len = nameEnd - pos;
      if (len === 1 || len === 14) {
        const name = head.slice(pos, nameEnd).toLowerCase();
        if (name === 'l' || name === 'content-length') {
          let end = nl;
          if (end > colon && head.charCodeAt(end - 1) === 13) end--;
          values.push(head.slice(colon + 1, end));
        }
      }
    }
    pos = nl + 1;
  }
  return parseContentLength(values);
}

function clError(raw: string): SipParseError {
  return new SipParseError('SIP_ERR_CONTENT_LENGTH', `bad Content-Length: ${raw.slice(0, 40)}`, { header: 'Content-Length' });
}
