// From the platform's INVITE offer (GB/T 28181-2016 §9.2 live, §9.8 playback, §9.9 download) to what
// the device does and answers: where the RTP goes and how, which SSRC, how much media; and the SDP
// answer with the y= SSRC echoed and an f= line. Pure.
import { buildSdp, formatMediaFormat, type GbSdp, type SdpAttribute, type SdpSummary } from '@vms/gb28181';
import { DeviceSimError } from './errors.ts';
import type { MediaSinkMode } from './media/sink.ts';
import { PS_PAYLOAD_TYPE } from './media/rtp.ts';

export type SessionKind = 'Play' | 'Playback' | 'Download';
const SESSION_KINDS: readonly SessionKind[] = ['Play', 'Playback', 'Download'];

export interface MediaPlan {
  kind: SessionKind;
  /** y= of the answer: the offer's when valid (and not answering our own), else one we made up. */
  ssrc: string;
  mode: MediaSinkMode;
  /** Offer's c= / m= port: where UDP goes, or where the device connects (tcp-connect). */
  remoteHost: string;
  remotePort: number;
  payloadType: number;
  /** Playback/Download: the t= range length, ms. Undefined for live. */
  rangeMs: number | undefined;
  /** Download: a=downloadspeed; otherwise 1. */
  scale: number;
  timing: { start: string; stop: string };
}

/**
 * `ownSsrc`: answer (and send RTP with) an SSRC of our own even when the offer's is valid, as some lower
 * platforms do (built from their own domain); the platform must adopt it.
 */
export function planMedia(offer: SdpSummary, fallbackSsrc: () => string, ownSsrc = false): MediaPlan {
  const kind = SESSION_KINDS.find((k) => k.toLowerCase() === offer.sessionName.trim().toLowerCase());
  if (kind === undefined) throw new DeviceSimError('DSIM_ERR_BAD_OFFER', `unsupported session s=${offer.sessionName}`);
  const ps = offer.payloads.find((p) => p.encoding.toUpperCase() === 'PS') ?? offer.payloads.find((p) => p.payloadType === PS_PAYLOAD_TYPE);
  if (ps === undefined) throw new DeviceSimError('DSIM_ERR_BAD_OFFER', 'offer has no PS payload');
  if (offer.port <= 0 && !(offer.transport === 'tcp' && offer.setup === 'active')) {
    throw new DeviceSimError('DSIM_ERR_BAD_OFFER', 'offer has no media port');
  }
  const start = Number(offer.start);
  const stop = Number(offer.stop);
  const rangeMs = kind !== 'Play' && Number.isFinite(start) && Number.isFinite(stop) && stop > start ? (stop - start) * 1000 : undefined;
  const speed = Number(offer.downloadSpeed);
  return {
    kind,
    ssrc: !ownSsrc && offer.ssrcValid && offer.ssrc !== undefined ? offer.ssrc : fallbackSsrc(),
    mode: offer.transport === 'udp' ? 'udp' : offer.setup?.toLowerCase() === 'active' ? 'tcp-listen' : 'tcp-connect',
    remoteHost: offer.address,
    remotePort: offer.port,
    payloadType: ps.payloadType,
    rangeMs,
    scale: kind === 'Download' && Number.isFinite(speed) && speed > 0 ? speed : 1,
    timing: { start: offer.start, stop: offer.stop },
  };
}

export interface AnswerParams {
  /** o= username: the channel answering. */
  channelId: string;
  /** Address the RTP comes from / the device listens on. */
  address: string;
  port: number;
  fps: number;
  /** Download: a=filesize, bytes. */
  fileSize?: number;
}

export function buildAnswerSdp(plan: MediaPlan, p: AnswerParams): string {
  const attributes: SdpAttribute[] = [{ name: 'sendonly' }, { name: 'rtpmap', value: `${plan.payloadType} PS/90000` }];
  if (plan.mode !== 'udp') {
    // RFC 4145 §4: our role is the opposite of the offer's; a=connection:new as the offer had.
    attributes.push({ name: 'setup', value: plan.mode === 'tcp-connect' ? 'active' : 'passive' }, { name: 'connection', value: 'new' });
  }
  if (plan.kind === 'Download' && p.fileSize !== undefined) attributes.push({ name: 'filesize', value: String(p.fileSize) });
  const sdp: GbSdp = {
    version: '0',
    origin: { username: p.channelId, sessionId: '0', sessionVersion: '0', netType: 'IN', addrType: 'IP4', address: p.address },
    sessionName: plan.kind,
    connection: { netType: 'IN', addrType: 'IP4', address: p.address },
    timing: plan.timing,
    attributes: [],
    media: [{ type: 'video', port: p.port, protocol: plan.mode === 'udp' ? 'RTP/AVP' : 'TCP/RTP/AVP', formats: [String(plan.payloadType)], attributes }],
    ssrc: plan.ssrc,
    // H.264 (2), 720P (5), the frame rate, CBR (1), 2048 kbit/s; no audio.
    format: formatMediaFormat({
      video: { codec: '2', resolution: '5', frameRate: String(p.fps), rateType: '1', bitRate: '2048' },
      audio: { codec: '', bitRate: '', sampleRate: '' },
    }),
  };
  return buildSdp(sdp);
}
