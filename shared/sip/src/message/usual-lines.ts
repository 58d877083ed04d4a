import type { SipHeaders } from './headers.ts';

/**
 * The header lines of a REGISTER as GB28181 devices write it (osip/eXosip, Hikvision, Dahua, SIPp, the
 * simulators), read by one match of a compiled regex instead of parse.ts's line scanner:
 *
 *   Via, From, To, Call-ID, CSeq, Contact, [Authorization], Max-Forwards, [User-Agent], Expires, Content-Length
 *
 * in that order, each once, with the canonical spelling, one SP after the colon, no LWS at a value's
 * ends, CRLF line ends, and nothing after the last line. Issue 11: the scanner slices, token-checks and
 * trims each line apart, ~14k instructions under callgrind for the eleven lines of the second leg of
 * every registration.
 *
 * A strict subset: whatever does not match — other order, another or a repeated header, compact or
 * other-case names, LWS, folded lines, bare LF — makes readUsualHeaderLines return false, having added
 * nothing, and the caller scans the lines (every value the regex takes is a value the scanner takes as
 * written: it would trim nothing). message-usual-forms.test.ts holds the two equal on every
 * single-character mutation of such heads.
 *
 * The regex is linear: each value stays within its line (anchored by the CRLF after it), and each name
 * starts with a letter no value's CRLF can be mistaken for.
 */

/** A value with no SP/HT at either end and no CR or LF in it (usual-datagram.ts's). */
const V = String.raw`[^ \t\r\n](?:[^\r\n]*[^ \t\r\n])?`;

const USUAL_REGISTER_LINES = new RegExp(
  `Via: (${V})\r\nFrom: (${V})\r\nTo: (${V})\r\nCall-ID: (${V})\r\nCSeq: (${V})\r\nContact: (${V})\r\n` +
    `(?:Authorization: (${V})\r\n)?Max-Forwards: (${V})\r\n(?:User-Agent: (${V})\r\n)?Expires: (${V})\r\nContent-Length: (${V})$`,
  'y',
);

/**
 * Appends to `headers` the header lines of `head` from `from` (the first line's start; `head` ends
 * before the empty line) when they are the usual REGISTER lines above, and returns true; else false,
 * `headers` untouched. The names are the literals, so SipHeaders resolves them without hashing.
 */
export function readUsualHeaderLines(head: string, from: number, headers: SipHeaders): boolean {
  USUAL_REGISTER_LINES.lastIndex = from;
  const m = USUAL_REGISTER_LINES.exec(head);
  if (m === null) return false;
  headers.append('Via', m[1] as string);
  headers.append('From', m[2] as string);
  headers.append('To', m[3] as string);
  headers.append('Call-ID', m[4] as string);
  headers.append('CSeq', m[5] as string);
  headers.append('Contact', m[6] as string);
  if (m[7] !== undefined) headers.append('Authorization', m[7]);
  headers.append('Max-Forwards', m[8] as string);
  if (m[9] !== undefined) headers.append('User-Agent', m[9]);
  headers.append('Expires', m[10] as string);
  headers.append('Content-Length', m[11] as string);
  return true;
}
