/**
 * SSRC and Subject conventions of GB/T 28181-2016: the SDP `y=` field (SDP extensions, Annex F of the
 * 2016 text, Annex G in 2022) and the Subject header of media INVITEs (§9.2).
 *
 * y= SSRC: 10 decimal digits. Digit 1: 0 = live (real-time) stream, 1 = history (playback/download).
 * Digits 2-6: digits 4-8 of the SIP domain id. Digits 7-10: the stream's sequence within the domain.
 * As an RTP SSRC it is the decimal number itself (fits 32 bits because digit 1 is 0 or 1).
 *
 * Subject: `<media sender id>:<sender stream seq>,<media receiver id>:<receiver stream seq>`; for a
 * platform INVITE the sender is the channel and its stream seq is the y= SSRC (sample 12).
 */
import { GbArgumentError, GbSdpError } from '../errors.ts';

const SSRC_RE = /^\d{10}$/;
const MAX_SSRC = 0xffffffff; // RTP SSRC is 32 bits (RFC 3550 §5.1)
const SEQUENCE_MODULO = 10_000;

/** True for a 10-digit decimal SSRC that fits the 32-bit RTP field. */
export function ssrcIsValid(y: string | undefined): boolean {
  return y !== undefined && SSRC_RE.test(y) && Number(y) <= MAX_SSRC;
}

export interface SsrcParts {
  /** Digit 1 = 1: history stream (playback/download); 0: live. */
  history: boolean;
  /** Digits 2-6: digits 4-8 of the SIP domain id. */
  domainPart: string;
  /** Digits 7-10. */
  sequence: number;
}

export function parseSsrc(y: string): SsrcParts {
  if (!ssrcIsValid(y)) throw new GbSdpError('SSRC must be 10 decimal digits');
  return { history: y[0] === '1', domainPart: y.slice(1, 6), sequence: Number(y.slice(6)) };
}

/** Builds a y= SSRC from the domain (10-digit realm or 20-digit id) and a sequence (mod 10000). */
export function makeSsrc(opts: { history: boolean; domain: string; sequence: number }): string {
  if (!/^\d{10}(\d{10})?$/.test(opts.domain)) throw new GbArgumentError('domain must be a 10- or 20-digit code');
  if (!Number.isSafeInteger(opts.sequence) || opts.sequence < 0) throw new GbArgumentError('sequence must be a non-negative integer');
  const seq = String(opts.sequence % SEQUENCE_MODULO).padStart(4, '0');
  return `${opts.history ? '1' : '0'}${opts.domain.slice(3, 8)}${seq}`;
}

/** The RTP header SSRC value of a y= string. */
export function ssrcToRtp(y: string): number {
  if (!ssrcIsValid(y)) throw new GbSdpError('SSRC must be 10 decimal digits');
  return Number(y);
}

/** Same, as 8 upper-case hex digits (the form media servers use for RTP stream ids). */
export function ssrcToHex(y: string): string {
  return ssrcToRtp(y).toString(16).toUpperCase().padStart(8, '0');
}

export interface Subject {
  senderId: string;
  senderStream: string;
  receiverId: string;
  receiverStream: string;
}

export function buildSubject(subject: Subject): string {
  return `${subject.senderId}:${subject.senderStream},${subject.receiverId}:${subject.receiverStream}`;
}

export function parseSubject(value: string): Subject {
  const m = /^\s*([^:,\s]+):([^,\s]*)\s*,\s*([^:,\s]+):(\S*)\s*$/.exec(value);
  if (m === null) throw new GbSdpError('malformed Subject');
  return { senderId: m[1] as string, senderStream: m[2] as string, receiverId: m[3] as string, receiverStream: m[4] as string };
}
