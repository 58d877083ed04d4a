/**
 * SDP as GB/T 28181 uses it (§9.2; SDP extensions in Annex F of the 2016 text, Annex G in 2022;
 * RFC 4566 underneath). Generic SDP libraries drop the two GB-specific lines; this parser keeps them:
 *   y=  10-digit SSRC, a decimal *string* (leading zeros matter: `0100000001`)
 *   f=  media format `v/codec/resolution/framerate/ratetype/bitrate a/codec/bitrate/samplerate`
 * wherever they appear (session or media level). Attributes stay in their original order.
 * Blank lines between fields are tolerated (one device emits them, sample 12).
 */
import { GbSdpError, GbTooLargeError } from '../errors.ts';

/** An SDP offer/answer is a few hundred bytes; 16 KiB bounds the work on hostile input. */
export const DEFAULT_MAX_SDP_BYTES = 16 * 1024;
const MAX_PORT = 65535;

export interface SdpOrigin {
  /** GB/T 28181: the id of the sender (device, channel or platform). */
  username: string;
  sessionId: string;
  sessionVersion: string;
  netType: string;
  addrType: string;
  address: string;
}

export interface SdpConnection {
  netType: string;
  addrType: string;
  address: string;
}

export interface SdpAttribute {
  name: string;
  /** Absent for flag attributes (`a=recvonly`). */
  value?: string;
}

/** A line this model does not break down (i=, b=, k=, extra t= ...), kept for the round trip. */
export interface SdpLine {
  type: string;
  value: string;
}

export interface GbSdpMedia {
  type: string;
  port: number;
  portCount?: number;
  /** `RTP/AVP` (UDP) or `TCP/RTP/AVP` (RFC 4571 framing, GB/T 28181-2016 §9.2). */
  protocol: string;
  formats: string[];
  connection?: SdpConnection;
  attributes: SdpAttribute[];
  lines?: SdpLine[];
}

export interface GbSdp {
  version: string;
  origin: SdpOrigin;
  /** Play, Playback, Download or Talk (§9.2). */
  sessionName: string;
  /** u= of playback/download: `channelId:param`. */
  uri?: string;
  connection?: SdpConnection;
  /** t= as sent: `0 0` for live, seconds since 1970 for playback/download. */
  timing: { start: string; stop: string };
  attributes: SdpAttribute[];
  media: GbSdpMedia[];
  /** y= raw value. Usually the 10-digit SSRC; some devices put their own id there (sample 12). */
  ssrc?: string;
  /** f= raw value (may be empty: `f=`). */
  format?: string;
  lines?: SdpLine[];
}

const LINE_RE = /^([a-z])=(.*)$/;
const MEDIA_RE = /^(\S+) (\d{1,5})(?:\/(\d{1,5}))? (\S+)((?: \S+)*)$/;

export function parseSdp(input: Uint8Array | string, opts: { maxBytes?: number } = {}): GbSdp {
  const limit = opts.maxBytes ?? DEFAULT_MAX_SDP_BYTES;
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length;
  if (size > limit) throw new GbTooLargeError(size, limit);
  const text = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.length).toString('utf8');

  let version: string | undefined;
  let origin: SdpOrigin | undefined;
  let sessionName: string | undefined;
  let timing: GbSdp['timing'] | undefined;
  const session: Partial<GbSdp> & { attributes: SdpAttribute[]; lines: SdpLine[] } = { attributes: [], lines: [] };
  const media: Array<GbSdpMedia & { lines: SdpLine[] }> = [];

  for (const rawLine of text.split(/\r\n|\n|\r/)) {
    const line = rawLine.trimEnd();
    if (line.trim() === '') continue;
    const m = LINE_RE.exec(line);
    if (m === null) throw new GbSdpError('malformed SDP line');
    const type = m[1] as string;
    const value = m[2] as string;
    const current = media[media.length - 1];
    switch (type) {
      case 'v':
        if (version !== undefined || current !== undefined) throw new GbSdpError('misplaced v=');
        version = value.trim();
        break;
      case 'o':
        if (origin !== undefined || current !== undefined) throw new GbSdpError('misplaced o=');
        origin = parseOrigin(value);
        break;
      case 's':
        if (sessionName !== undefined || current !== undefined) throw new GbSdpError('misplaced s=');
        sessionName = value.trim();
        break;
      case 'u':
        if (session.uri !== undefined || current !== undefined) throw new GbSdpError('misplaced u=');
        session.uri = value.trim();
        break;
      case 't':
        if (timing === undefined && current === undefined) timing = parseTiming(value);
        else (current ?? session).lines.push({ type, value });
        break;
      case 'c': {
        const target = current ?? session;
        if (target.connection !== undefined) throw new GbSdpError('duplicate c=');
        target.connection = parseConnection(value);
        break;
      }
      case 'm':
        media.push({ ...parseMedia(value), attributes: [], lines: [] });
        break;
      case 'a':
        (current ?? session).attributes.push(parseAttribute(value));
        break;
      case 'y':
        if (session.ssrc !== undefined) throw new GbSdpError('duplicate y=');
        session.ssrc = value.trim();
        break;
      case 'f':
        if (session.format !== undefined) throw new GbSdpError('duplicate f=');
        session.format = value.trim();
        break;
      default:
        (current ?? session).lines.push({ type, value });
    }
  }
  if (origin === undefined) throw new GbSdpError('SDP without o=');
  if (sessionName === undefined) throw new GbSdpError('SDP without s=');
  if (media.length === 0) throw new GbSdpError('SDP without m=');

  const out: GbSdp = {
    version: version ?? '0',
    origin,
    sessionName,
    timing: timing ?? { start: '0', stop: '0' },
    attributes: session.attributes,
    media: media.map(({ lines, ...rest }) => (lines.length > 0 ? { ...rest, lines } : rest)),
  };
  if (session.uri !== undefined) out.uri = session.uri;
  if (session.connection !== undefined) out.connection = session.connection;
  if (session.ssrc !== undefined) out.ssrc = session.ssrc;
  if (session.format !== undefined) out.format = session.format;
  if (session.lines.length > 0) out.lines = session.lines;
  return out;
}

function tokens(value: string, count: number, what: string): string[] {
  const parts = value.trim().split(/\s+/);
  if (parts.length !== count || parts.some((p) => p === '')) throw new GbSdpError(`malformed ${what}`);
  return parts;
}

function parseOrigin(value: string): SdpOrigin {
  const [username, sessionId, sessionVersion, netType, addrType, address] = tokens(value, 6, 'o=') as [
    string, string, string, string, string, string,
  ];
  return { username, sessionId, sessionVersion, netType, addrType, address };
}

function parseConnection(value: string): SdpConnection {
  const [netType, addrType, address] = tokens(value, 3, 'c=') as [string, string, string];
  return { netType, addrType, address };
}

function parseTiming(value: string): GbSdp['timing'] {
  const [start, stop] = tokens(value, 2, 't=') as [string, string];
  if (!/^\d{1,20}$/.test(start) || !/^\d{1,20}$/.test(stop)) throw new GbSdpError('t= values must be decimal');
  return { start, stop };
}

function parseMedia(value: string): Omit<GbSdpMedia, 'attributes'> {
  const m = MEDIA_RE.exec(value.trim().replace(/\s+/g, ' '));
  if (m === null) throw new GbSdpError('malformed m=');
  const port = Number(m[2]);
  if (port > MAX_PORT) throw new GbSdpError('m= port out of range');
  const out: Omit<GbSdpMedia, 'attributes'> = {
    type: m[1] as string,
    port,
    protocol: m[4] as string,
    formats: (m[5] ?? '').split(' ').filter((f) => f !== ''),
  };
  if (m[3] !== undefined) out.portCount = Number(m[3]);
  return out;
}

function parseAttribute(value: string): SdpAttribute {
  const colon = value.indexOf(':');
  const name = (colon < 0 ? value : value.slice(0, colon)).trim();
  if (name === '' || /\s/.test(name)) throw new GbSdpError('malformed a=');
  return colon < 0 ? { name } : { name, value: value.slice(colon + 1).trim() };
}

/** Order of session-level lines in RFC 4566 §5; GB lines y= and f= close the description. */
const SESSION_ORDER = 'vosiuepcbtrzka';
const MEDIA_ORDER = 'icbka';

/** Serialises with CRLF line ends: v o s [i] u [e p] c [b] t [r z k] a* (m c a*)* y f. */
export function buildSdp(sdp: GbSdp): string {
  const session: SdpLine[] = [
    { type: 'v', value: sdp.version },
    { type: 'o', value: formatOrigin(sdp.origin) },
    { type: 's', value: sdp.sessionName },
    ...(sdp.uri === undefined ? [] : [{ type: 'u', value: sdp.uri }]),
    ...(sdp.connection === undefined ? [] : [{ type: 'c', value: formatConnection(sdp.connection) }]),
    { type: 't', value: `${sdp.timing.start} ${sdp.timing.stop}` },
    ...(sdp.lines ?? []),
    ...sdp.attributes.map(attributeLine),
  ];
  const out = sortLines(session, SESSION_ORDER);
  for (const m of sdp.media) {
    const port = m.portCount === undefined ? String(m.port) : `${m.port}/${m.portCount}`;
    out.push({ type: 'm', value: [m.type, port, m.protocol, ...m.formats].join(' ') });
    const mediaLines: SdpLine[] = [
      ...(m.connection === undefined ? [] : [{ type: 'c', value: formatConnection(m.connection) }]),
      ...(m.lines ?? []),
      ...m.attributes.map(attributeLine),
    ];
    out.push(...sortLines(mediaLines, MEDIA_ORDER));
  }
  if (sdp.ssrc !== undefined) out.push({ type: 'y', value: sdp.ssrc });
  if (sdp.format !== undefined) out.push({ type: 'f', value: sdp.format });
  return out.map((l) => `${l.type}=${l.value}\r\n`).join('');
}

function sortLines(lines: SdpLine[], order: string): SdpLine[] {
  const rank = (t: string): number => (order.includes(t) ? order.indexOf(t) : order.length);
  return lines.map((l, i) => ({ l, i })).sort((a, b) => rank(a.l.type) - rank(b.l.type) || a.i - b.i).map(({ l }) => l);
}

function formatOrigin(o: SdpOrigin): string {
  return [o.username, o.sessionId, o.sessionVersion, o.netType, o.addrType, o.address].join(' ');
}

function formatConnection(c: SdpConnection): string {
  return `${c.netType} ${c.addrType} ${c.address}`;
}

function attributeLine(a: SdpAttribute): SdpLine {
  return { type: 'a', value: a.value === undefined ? a.name : `${a.name}:${a.value}` };
}

/** Value of the first `a=<name>` (case-insensitive name), '' for a flag, undefined when absent. */
export function getAttribute(attributes: readonly SdpAttribute[], name: string): string | undefined {
  const lower = name.toLowerCase();
  const found = attributes.find((a) => a.name.toLowerCase() === lower);
  return found === undefined ? undefined : (found.value ?? '');
}
