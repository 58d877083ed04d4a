/**
 * The requests a lower platform sends to its upstream, as specs for `SipStack.request` (pure).
 * Shapes follow the captures of real lower platforms (samples 16-18):
 *  - REGISTER sip:<upstream id>@<host:port>; From = To = <sip:<our id>@<our domain>>; digest
 *    username = our id (sample 17); one Call-ID and From tag for a registration's whole life, CSeq
 *    rising (RFC 3261 §10.2.4 refreshes reuse the Call-ID);
 *  - MESSAGE sip:<upstream id>@<host:port>, To <sip:<upstream id>@<upstream domain>>,
 *    Content-Type Application/MANSCDP+xml, a new Call-ID each (samples 16, 18);
 *  - Keepalive = Notify/Keepalive with our id as DeviceID and Status OK (§9.6, sample 17).
 */
import { buildKeepalive, type ManscdpCharset } from '@vms/gb28181';
import type { DigestAuth, HostTarget, OutgoingRequestSpec } from '@vms/sip';
import { domainOf, type UpstreamPlatform } from '../platform/platform.ts';

/** GB/T 28181 spelling of the MANSCDP content type. */
export const MANSCDP_CONTENT_TYPE = 'Application/MANSCDP+xml';

export interface RegisterIds {
  readonly callId: string;
  readonly fromTag: string;
}

export function upstreamTarget(p: UpstreamPlatform): HostTarget {
  return { host: p.host, port: p.port, transport: p.transport };
}

/** Digest credentials for this platform: our id as username; none without a password. */
export function upstreamAuth(p: UpstreamPlatform): DigestAuth | undefined {
  return p.password === '' ? undefined : { username: p.localId, password: p.password };
}

/** Request-URI of requests to the upstream: its id at the address it is reached on. */
export function upstreamUri(p: UpstreamPlatform): string {
  const host = p.host.includes(':') && !p.host.startsWith('[') ? `[${p.host}]` : p.host;
  return `sip:${p.serverId}@${host}:${p.port}`;
}

/** How we name ourselves to this platform: our id at our domain. */
export function localAddress(p: UpstreamPlatform): string {
  return `<sip:${p.localId}@${domainOf(p.localId)}>`;
}

export function registerRequest(p: UpstreamPlatform, ids: RegisterIds, cseq: number, expiresS: number): OutgoingRequestSpec {
  return {
    method: 'REGISTER',
    uri: upstreamUri(p),
    headers: {
      From: `${localAddress(p)};tag=${ids.fromTag}`,
      To: localAddress(p),
      'Call-ID': ids.callId,
      CSeq: `${cseq} REGISTER`,
      Expires: expiresS,
    },
    target: upstreamTarget(p),
  };
}

/** A MANSCDP MESSAGE to the upstream (keepalive, query answers, catalog pages). */
export function upstreamMessage(p: UpstreamPlatform, body: Buffer): OutgoingRequestSpec {
  return {
    method: 'MESSAGE',
    uri: upstreamUri(p),
    headers: { From: localAddress(p), To: `<sip:${p.serverId}@${p.domain}>` },
    body,
    contentType: MANSCDP_CONTENT_TYPE,
    target: upstreamTarget(p),
  };
}

export function keepaliveRequest(p: UpstreamPlatform, sn: number): OutgoingRequestSpec {
  return upstreamMessage(p, buildKeepalive({ sn: String(sn), deviceId: p.localId, status: 'OK' }, { charset: charsetOf(p) }));
}

export function charsetOf(p: UpstreamPlatform): ManscdpCharset {
  return p.charset;
}
