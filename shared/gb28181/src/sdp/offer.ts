/**
 * INVITE offers a platform sends to a device (GB/T 28181-2016 §9.2 live, §9.8 playback, §9.9 download)
 * and the summary of the device's answer the platform acts on.
 *
 * Transport (from the platform's side, RFC 4145 / RFC 4571 as adopted by GB/T 28181-2016 §9.2):
 *   udp          m=video <port> RTP/AVP ...
 *   tcp-passive  m=video <port> TCP/RTP/AVP ...  a=setup:passive  a=connection:new  (platform listens)
 *   tcp-active   m=video <port> TCP/RTP/AVP ...  a=setup:active   a=connection:new  (platform connects)
 */
import { GbArgumentError, GbSdpError } from '../errors.ts';
import { toSdpTime } from '../time.ts';
import { buildSdp, getAttribute, type GbSdp, type GbSdpMedia, type SdpAttribute } from './sdp.ts';
import { ssrcIsValid } from './ssrc.ts';

export type MediaTransport = 'udp' | 'tcp-passive' | 'tcp-active';

export interface RtpPayload {
  payloadType: number;
  encoding: string;
  clockRate: number;
}

/** PS is the stream format of GB/T 28181 (Annex C); MPEG4 and H264 are offered as alternatives. */
export const DEFAULT_PAYLOADS: readonly RtpPayload[] = [
  { payloadType: 96, encoding: 'PS', clockRate: 90000 },
  { payloadType: 97, encoding: 'MPEG4', clockRate: 90000 },
  { payloadType: 98, encoding: 'H264', clockRate: 90000 },
];

export interface OfferParams {
  /** o= username: the id the platform (or its media server) speaks as. */
  ownerId: string;
  /** Media receive address, used in o= and c=. */
  address: string;
  /** Media receive port (for tcp-active: the local port the platform connects from, or 9). */
  port: number;
  /** y= SSRC, 10 digits (ssrc.ts makeSsrc). */
  ssrc: string;
  transport?: MediaTransport;
  payloads?: readonly RtpPayload[];
  /** f= line; DEFAULT_OFFER_FORMAT when undefined, `f=` when ''. */
  format?: string;
}

/**
 * SPEC §8: every offer carries `f=`. Every field may be empty (Annex F); the full syntax with no field stated is
 * what a strict parser of that line accepts, while the device still answers with what it actually sends.
 */
export const DEFAULT_OFFER_FORMAT = 'v/////a///';

export interface HistoryOfferParams extends OfferParams {
  channelId: string;
  start: Date;
  end: Date;
  /** Second part of u= (`channelId:0` by default). */
  uriParam?: string;
}

export interface DownloadOfferParams extends HistoryOfferParams {
  /** a=downloadspeed: multiple of real time requested (e.g. 4). */
  downloadSpeed: number;
}

export function buildPlayOffer(p: OfferParams): string {
  return buildSdp(offerSdp('Play', p, []));
}

export function buildPlaybackOffer(p: HistoryOfferParams): string {
  return buildSdp(historySdp('Playback', p, []));
}

export function buildDownloadOffer(p: DownloadOfferParams): string {
  if (!Number.isInteger(p.downloadSpeed) || p.downloadSpeed < 1) throw new GbArgumentError('downloadSpeed must be a positive integer');
  return buildSdp(historySdp('Download', p, [{ name: 'downloadspeed', value: String(p.downloadSpeed) }]));
}

function historySdp(name: 'Playback' | 'Download', p: HistoryOfferParams, extra: SdpAttribute[]): GbSdp {
  if (p.channelId === '') throw new GbArgumentError('channelId is required');
  if (!(p.start.getTime() < p.end.getTime())) throw new GbArgumentError('start must be before end');
  const sdp = offerSdp(name, p, extra);
  sdp.uri = `${p.channelId}:${p.uriParam ?? '0'}`;
  sdp.timing = { start: toSdpTime(p.start), stop: toSdpTime(p.end) };
  return sdp;
}

function offerSdp(sessionName: string, p: OfferParams, extra: SdpAttribute[]): GbSdp {
  if (p.ownerId === '' || p.address === '') throw new GbArgumentError('ownerId and address are required');
  if (!Number.isInteger(p.port) || p.port < 0 || p.port > 65535) throw new GbArgumentError('port must be in 0..65535');
  if (!ssrcIsValid(p.ssrc)) throw new GbArgumentError('ssrc must be 10 decimal digits');
  const transport = p.transport ?? 'udp';
  const payloads = p.payloads ?? DEFAULT_PAYLOADS;
  const attributes: SdpAttribute[] = [
    { name: 'recvonly' },
    ...payloads.map((pl) => ({ name: 'rtpmap', value: `${pl.payloadType} ${pl.encoding}/${pl.clockRate}` })),
    ...extra,
  ];
  if (transport !== 'udp') {
    attributes.push({ name: 'setup', value: transport === 'tcp-passive' ? 'passive' : 'active' });
    attributes.push({ name: 'connection', value: 'new' });
  }
  const media: GbSdpMedia = {
    type: 'video',
    port: p.port,
    protocol: transport === 'udp' ? 'RTP/AVP' : 'TCP/RTP/AVP',
    formats: payloads.map((pl) => String(pl.payloadType)),
    attributes,
  };
  const sdp: GbSdp = {
    version: '0',
    origin: { username: p.ownerId, sessionId: '0', sessionVersion: '0', netType: 'IN', addrType: 'IP4', address: p.address },
    sessionName,
    connection: { netType: 'IN', addrType: 'IP4', address: p.address },
    timing: { start: '0', stop: '0' },
    attributes: [],
    media: [media],
    ssrc: p.ssrc,
  };
  sdp.format = p.format ?? DEFAULT_OFFER_FORMAT;
  return sdp;
}

/** What a platform needs from an SDP (usually a device's answer), for its first video stream. */
export interface SdpSummary {
  ownerId: string;
  sessionName: string;
  /** Channel id from u= (`channelId:param`), when present. */
  channelId?: string;
  /** c= of the media, else of the session, else o= address. */
  address: string;
  port: number;
  protocol: string;
  transport: 'udp' | 'tcp';
  /** a=setup (active / passive / actpass) for TCP. */
  setup?: string;
  direction?: 'sendonly' | 'recvonly' | 'sendrecv' | 'inactive';
  payloads: RtpPayload[];
  /** Raw y= value: may be a device id instead of an SSRC (sample 12); check `ssrcValid`. */
  ssrc?: string;
  ssrcValid: boolean;
  format?: string;
  downloadSpeed?: string;
  fileSize?: string;
  start: string;
  stop: string;
}

const DIRECTIONS = ['sendonly', 'recvonly', 'sendrecv', 'inactive'] as const;

export function describeSdp(sdp: GbSdp): SdpSummary {
  const media = sdp.media.find((m) => m.type.toLowerCase() === 'video') ?? sdp.media[0];
  if (media === undefined) throw new GbSdpError('SDP without m=');
  const attrs = [...media.attributes, ...sdp.attributes];
  const out: SdpSummary = {
    ownerId: sdp.origin.username,
    sessionName: sdp.sessionName,
    address: (media.connection ?? sdp.connection ?? sdp.origin).address,
    port: media.port,
    protocol: media.protocol,
    transport: media.protocol.toUpperCase().includes('TCP') ? 'tcp' : 'udp',
    payloads: rtpPayloads(media.attributes),
    ssrcValid: ssrcIsValid(sdp.ssrc),
    start: sdp.timing.start,
    stop: sdp.timing.stop,
  };
  const channelId = sdp.uri?.split(':')[0];
  if (channelId !== undefined && channelId !== '') out.channelId = channelId;
  const setup = getAttribute(attrs, 'setup');
  if (setup !== undefined) out.setup = setup;
  const direction = DIRECTIONS.find((d) => getAttribute(attrs, d) !== undefined);
  if (direction !== undefined) out.direction = direction;
  if (sdp.ssrc !== undefined) out.ssrc = sdp.ssrc;
  if (sdp.format !== undefined) out.format = sdp.format;
  const downloadSpeed = getAttribute(attrs, 'downloadspeed');
  if (downloadSpeed !== undefined) out.downloadSpeed = downloadSpeed;
  const fileSize = getAttribute(attrs, 'filesize');
  if (fileSize !== undefined) out.fileSize = fileSize;
  return out;
}

/** a=rtpmap entries of a media section, in order; malformed ones are skipped. */
export function rtpPayloads(attributes: readonly SdpAttribute[]): RtpPayload[] {
  const out: RtpPayload[] = [];
  for (const a of attributes) {
    if (a.name.toLowerCase() !== 'rtpmap' || a.value === undefined) continue;
    const m = /^(\d{1,3})\s+([^/\s]+)\/(\d{1,6})/.exec(a.value);
    if (m !== null) out.push({ payloadType: Number(m[1]), encoding: m[2] as string, clockRate: Number(m[3]) });
  }
  return out;
}
