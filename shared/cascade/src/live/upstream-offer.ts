/**
 * Live view asked for by an upstream platform (SPEC CASC-6; GB/T 28181-2016 §9.2): what its INVITE's
 * SDP offer asks for — where it wants the RTP (c= / m=), over UDP or TCP (RFC 4571 framing), with
 * which y= SSRC — and the SDP answer describing where the media node sends from. Pure.
 *
 * TCP (RFC 4145 as GB/T 28181-2016 §9.2 uses it): the upstream listening (`a=setup:passive`, or
 * `actpass` / none, which lets the answerer choose) is served — the media node connects out (ZLM
 * startSendRtp with is_udp=0) and the answer says `a=setup:active`. An upstream that wants to connect
 * itself (`a=setup:active`) is not served.
 */
import { buildSdp, describeSdp, GbError, parseSdp, ssrcIsValid, type GbSdp, type SdpAttribute, type SdpSummary } from '@vms/gb28181';
import { CascadeError } from '../errors.ts';

/** GB/T 28181 Annex C: the stream is MPEG-PS; 96 is the payload type everyone uses for it. */
export const PS_PAYLOAD_TYPE = 96;
const PS_CLOCK_RATE = 90000;

export type UpstreamMediaTransport = 'udp' | 'tcp';

export interface UpstreamOffer {
  /** Where the upstream receives RTP: c= of the media, else of the session. */
  readonly address: string;
  readonly port: number;
  /** 'tcp': the upstream listens, the media node connects (is_udp=0). */
  readonly transport: UpstreamMediaTransport;
  /** y=: the SSRC the upstream expects in the RTP it receives. */
  readonly ssrc: string;
  /** The payload type the upstream gave PS (a=rtpmap), else 96. */
  readonly payloadType: number;
}

const bad = (what: string): CascadeError => new CascadeError('CASCADE_ERR_BAD_OFFER', `upstream offer: ${what}`);
const unsupported = (what: string): CascadeError => new CascadeError('CASCADE_ERR_UNSUPPORTED_OFFER', `upstream offer: ${what}`);

/** Reads the offer of an upstream's live-view INVITE; CASCADE_ERR_BAD_OFFER / _UNSUPPORTED_OFFER. */
export function readUpstreamOffer(body: Uint8Array | string): UpstreamOffer {
  if (body.length === 0) throw bad('no SDP');
  let summary: SdpSummary;
  try {
    const sdp: GbSdp = parseSdp(body);
    summary = describeSdp(sdp);
  } catch (err) {
    if (err instanceof GbError) throw new CascadeError('CASCADE_ERR_BAD_OFFER', `upstream offer: ${err.message}`, { cause: err });
    throw err;
  }
  if (summary.sessionName.trim().toLowerCase() !== 'play') throw unsupported(`s=${summary.sessionName} (only Play is served)`);
  if (!ssrcIsValid(summary.ssrc)) throw bad('y= must be a 10-digit SSRC');
  if (!/^[A-Za-z0-9.\-:]{1,253}$/.test(summary.address) || summary.address === '0.0.0.0') throw bad(`no usable c= address (${summary.address})`);
  if (!Number.isInteger(summary.port) || summary.port < 1 || summary.port > 65535) throw bad(`m= port ${summary.port}`);
  if (summary.direction === 'sendonly' || summary.direction === 'inactive') throw unsupported(`a=${summary.direction}: the upstream must receive`);
  if (summary.transport === 'tcp' && summary.setup?.trim().toLowerCase() === 'active') throw unsupported('a=setup:active (the upstream connecting to us) is not served');
  const ps = summary.payloads.find((p) => p.encoding.toUpperCase() === 'PS');
  let payloadType = PS_PAYLOAD_TYPE;
  if (ps !== undefined) payloadType = ps.payloadType;
  else if (summary.payloads.length > 0) throw unsupported('no PS payload offered (GB/T 28181 Annex C)');
  return { address: summary.address, port: summary.port, transport: summary.transport, ssrc: summary.ssrc as string, payloadType };
}

export interface UpstreamAnswerParams {
  /** o= username: the channel that sends (GB/T 28181-2016 §9.2). */
  readonly channelId: string;
  /** The media node's address (its SDP IP), in o= and c=. */
  readonly address: string;
  /** The port the media node sends from. */
  readonly port: number;
  readonly offer: UpstreamOffer;
}

/** The 200's SDP: s=Play, the media node's sending address, a=sendonly, PS, the upstream's own y=. */
export function buildUpstreamAnswer(p: UpstreamAnswerParams): string {
  const { offer } = p;
  const attributes: SdpAttribute[] = [{ name: 'sendonly' }, { name: 'rtpmap', value: `${offer.payloadType} PS/${PS_CLOCK_RATE}` }];
  if (offer.transport === 'tcp') attributes.push({ name: 'setup', value: 'active' }, { name: 'connection', value: 'new' });
  return buildSdp({
    version: '0',
    origin: { username: p.channelId, sessionId: '0', sessionVersion: '0', netType: 'IN', addrType: 'IP4', address: p.address },
    sessionName: 'Play',
    connection: { netType: 'IN', addrType: 'IP4', address: p.address },
    timing: { start: '0', stop: '0' },
    attributes: [],
    media: [
      {
        type: 'video',
        port: p.port,
        protocol: offer.transport === 'udp' ? 'RTP/AVP' : 'TCP/RTP/AVP',
        formats: [String(offer.payloadType)],
        attributes,
      },
    ],
    ssrc: offer.ssrc,
  });
}
