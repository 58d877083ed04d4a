import { SipHeaders } from '../message/headers.ts';
import type { SipRequest, SipResponse } from '../message/types.ts';

/**
 * RFC 3261 §17.1.1.3: the ACK an INVITE client transaction sends for a non-2xx final response.
 * Same Request-URI, Call-ID, From, CSeq number and Route set as the INVITE; To from the response
 * (it carries the UAS tag); exactly one Via, equal to the INVITE's top Via (same branch), so the
 * server transaction matches it. Built from raw header text: nothing here needs re-parsing.
 */
export function buildNon2xxAck(invite: SipRequest, response: SipResponse): SipRequest {
  const h = new SipHeaders();
  const topVia = firstHeaderValue(invite.headers.getLines('Via')[0] ?? '');
  h.append('Via', topVia);
  h.append('Max-Forwards', '70');
  copy(invite.headers, h, 'From');
  h.append('To', response.headers.get('To') ?? invite.headers.get('To') ?? '');
  copy(invite.headers, h, 'Call-ID');
  h.append('CSeq', `${cseqNumber(invite.headers.get('CSeq'))} ACK`);
  for (const route of invite.headers.getLines('Route')) h.append('Route', route);
  // §22.1: an ACK for a non-2xx carries the same credentials as the request it acknowledges.
  copy(invite.headers, h, 'Authorization');
  copy(invite.headers, h, 'Proxy-Authorization');
  h.append('Content-Length', '0');
  return { type: 'request', method: 'ACK', uri: invite.uri, rawUri: invite.rawUri, headers: h, body: Buffer.alloc(0) };
}

function copy(from: SipHeaders, to: SipHeaders, name: string): void {
  for (const v of from.getLines(name)) to.append(name, v);
}

/** The first comma-separated Via value of a header line (commas inside quotes/brackets excluded). */
export function firstHeaderValue(line: string): string {
  let quoted = false;
  let angle = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"' && line[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && c === '<') angle++;
    else if (!quoted && c === '>') angle = Math.max(0, angle - 1);
    else if (!quoted && angle === 0 && c === ',') return line.slice(0, i).trim();
  }
  return line.trim();
}

function cseqNumber(raw: string | undefined): string {
  const m = /^\s*(\d+)/.exec(raw ?? '');
  return m?.[1] ?? '0';
}
