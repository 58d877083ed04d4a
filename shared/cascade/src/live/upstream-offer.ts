/**
 * Live view, playback and download asked for by an upstream platform (SPEC CASC-6; GB/T 28181-2016 §9.2,
 * §9.8, §9.9): what its INVITE's
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
export type UpstreamMediaPurpose = 'live' | 'playback' | 'download';

/** s= of the offer (case as GB/T 28181 spells it) per purpose. */
const SESSION_NAMES: Readonly<Record<UpstreamMediaPurpose, string>> = { live: 'Play', playback: 'Playback', download: 'Download' };
/** Longest download speed a download offer may ask for (a=downloadspeed; devices do 1–8×). */
const MAX_DOWNLOAD_SPEED = 16;

export interface UpstreamOffer {
  /** s=Play / Playback / Download. */
  readonly purpose: UpstreamMediaPurpose;
  /** Playback / download: the recording's range (t=, epoch seconds in the SDP). */
  readonly range?: { readonly start: Date; readonly end: Date };
  /** Download: a=downloadspeed (multiple of real time), 1 when absent. */
  readonly downloadSpeed?: number;
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
  const name = summary.sessionName.trim().toLowerCase();
  const purpose = (Object.keys(SESSION_NAMES) as UpstreamMediaPurpose[]).find((k) => SESSION_NAMES[k].toLowerCase() === name);
  if (purpose === undefined) throw unsupported(`s=${summary.sessionName} (Play, Playback and Download are served)`);
  const history = purpose === 'live' ? {} : historyOf(purpose, summary);
  if (!ssrcIsValid(summary.ssrc)) throw bad('y= must be a 10-digit SSRC');
  if (!/^[A-Za-z0-9.\-:]{1,253}$/.test(summary.address) || summary.address === '0.0.0.0') throw bad(`no usable c= address (${summary.address})`);
  if (!Number.isInteger(summary.port) || summary.port < 1 || summary.port > 65535) throw bad(`m= port ${summary.port}`);
  if (summary.direction === 'sendonly' || summary.direction === 'inactive') throw unsupported(`a=${summary.direction}: the upstream must receive`);
  if (summary.transport === 'tcp' && summary.setup?.trim().toLowerCase() === 'active') throw unsupported('a=setup:active (the upstream connecting to us) is not served');
  const ps = summary.payloads.find((p) => p.encoding.toUpperCase() === 'PS');
  let payloadType = PS_PAYLOAD_TYPE;
  if (ps !== undefined) payloadType = ps.payloadType;
  else if (summary.payloads.length > 0) throw unsupported('no PS payload offered (GB/T 28181 Annex C)');
  return { purpose, ...history, address: summary.address, port: summary.port, transport: summary.transport, ssrc: summary.ssrc as string, payloadType };
}

/** t= (NTP-free epoch seconds, as GB/T 28181 writes them) and a=downloadspeed of a history offer. */
function historyOf(purpose: 'playback' | 'download', s: SdpSummary): Pick<UpstreamOffer, 'range' | 'downloadSpeed'> {
  const start = Number(s.start);
  const stop = Number(s.stop);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(stop) || start <= 0 || stop <= start) throw bad(`t=${s.start} ${s.stop} is not a recording range`);
  const range = { start: new Date(start * 1000), end: new Date(stop * 1000) };
  if (purpose === 'playback') return { range };
  const speed = s.downloadSpeed === undefined ? 1 : Number(s.downloadSpeed);
  if (!Number.isInteger(speed) || speed < 1 || speed > MAX_DOWNLOAD_SPEED) throw bad(`a=downloadspeed:${String(s.downloadSpeed)}`);
  return { range, downloadSpeed: speed };
}

export interface UpstreamAnswerParams {
  /** o= username: the channel that sends (GB/T 28181-2016 §9.2). */
  readonly channelId: string;
  /** The media node's address (its SDP IP), in o= and c=. */
  readonly address: string;
  /** The port the media node sends from. */
  readonly port: number;
  /** o= session version: 0 in the answer, one more in each re-INVITE's offer after it (RFC 3264 §8). */
  readonly sessionVersion?: number;
  readonly offer: UpstreamOffer;
}

/** The 200's SDP: s= as offered, the media node's sending address, a=sendonly, PS, the upstream's own y= (t= echoed for history). */
export function buildUpstreamAnswer(p: UpstreamAnswerParams): string {
  const { offer } = p;
  const attributes: SdpAttribute[] = [{ name: 'sendonly' }, { name: 'rtpmap', value: `${offer.payloadType} PS/${PS_CLOCK_RATE}` }];
  if (offer.transport === 'tcp') attributes.push({ name: 'setup', value: 'active' }, { name: 'connection', value: 'new' });
  return buildSdp({
    version: '0',
    origin: { username: p.channelId, sessionId: '0', sessionVersion: String(p.sessionVersion ?? 0), netType: 'IN', addrType: 'IP4', address: p.address },
    sessionName: SESSION_NAMES[offer.purpose],
    connection: { netType: 'IN', addrType: 'IP4', address: p.address },
    timing:
      offer.range === undefined
        ? { start: '0', stop: '0' }
        : { start: String(offer.range.start.getTime() / 1000), stop: String(offer.range.end.getTime() / 1000) },
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
