/**
 * MANSRTSP (GB/T 28181-2016 Annex B): RTSP-syntax playback control carried in SIP INFO bodies
 * (`Content-Type: Application/MANSRTSP`) within a Playback session (§9.8):
 *   PLAY  + Range: npt=now-      resume
 *   PLAY  + Range: npt=<s>-      seek to <s> seconds from the start of the requested range
 *   PLAY  + Scale: <x>           playback speed (0.25, 0.5, 1, 2, 4...)
 *   PAUSE + PauseTime: now       pause
 *   TEARDOWN                     stop
 * Line ends are CRLF as in RTSP (RFC 2326 §4).
 */
import { GbArgumentError, GbRtspError, GbTooLargeError } from './errors.ts';

export const MANSRTSP_CONTENT_TYPE = 'Application/MANSRTSP';
const MAX_BODY_BYTES = 4096;
const VERSION = 'RTSP/1.0';

export interface NptRange {
  /** `now` (resume where paused) or seconds from the start of the playback range. */
  start: 'now' | number;
  end?: number;
}

export interface MansrtspRequest {
  /** PLAY, PAUSE, TEARDOWN (upper-cased). */
  method: string;
  cseq: number;
  scale?: number;
  range?: NptRange;
  /** PAUSE: `now` (or an npt time). */
  pauseTime?: string;
  /** Other headers, by the name as sent. */
  headers?: Record<string, string>;
}

const REQUEST_LINE_RE = /^([A-Za-z_]+)\s+RTSP\/1\.0$/;
const HEADER_RE = /^([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)$/;
const NPT_RE = /^npt\s*=\s*(now|\d{1,9}(?:\.\d{1,6})?)\s*-\s*(\d{1,9}(?:\.\d{1,6})?)?$/i;
const NUMBER_RE = /^[+-]?\d{1,6}(?:\.\d{1,6})?$/;

export function parseMansrtsp(input: Uint8Array | string): MansrtspRequest {
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length;
  if (size > MAX_BODY_BYTES) throw new GbTooLargeError(size, MAX_BODY_BYTES);
  const text = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.length).toString('latin1');
  const lines = text.split(/\r\n|\n|\r/).map((l) => l.trim()).filter((l) => l !== '');
  const requestLine = REQUEST_LINE_RE.exec(lines[0] ?? '');
  if (requestLine === null) throw new GbRtspError('malformed MANSRTSP request line');
  let cseq: number | undefined;
  const out: Omit<MansrtspRequest, 'cseq'> = { method: (requestLine[1] as string).toUpperCase() };
  const others: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const h = HEADER_RE.exec(line);
    if (h === null) throw new GbRtspError('malformed MANSRTSP header');
    const name = h[1] as string;
    const value = (h[2] as string).trim();
    switch (name.toLowerCase()) {
      case 'cseq':
        if (!/^\d{1,9}$/.test(value)) throw new GbRtspError('CSeq must be an integer');
        cseq = Number(value);
        break;
      case 'scale':
        out.scale = parseScale(value);
        break;
      case 'range':
        out.range = parseRange(value);
        break;
      case 'pausetime':
        out.pauseTime = value;
        break;
      default:
        others[name] = value;
    }
  }
  if (cseq === undefined) throw new GbRtspError('MANSRTSP request without CSeq');
  const request: MansrtspRequest = { ...out, cseq };
  if (Object.keys(others).length > 0) request.headers = others;
  return request;
}

function parseScale(value: string): number {
  const scale = NUMBER_RE.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(scale) || scale === 0) throw new GbRtspError('Scale must be a non-zero number');
  return scale;
}

function parseRange(value: string): NptRange {
  const m = NPT_RE.exec(value);
  if (m === null) throw new GbRtspError('Range must be npt=<start>-[<end>]');
  const end = m[2] === undefined ? undefined : Number(m[2]);
  const start = (m[1] as string).toLowerCase() === 'now' ? 'now' : Number(m[1]);
  const range: NptRange = { start };
  if (end !== undefined) range.end = end;
  return range;
}

export function buildMansrtsp(req: MansrtspRequest): string {
  if (!/^[A-Z_]+$/.test(req.method)) throw new GbArgumentError('method must be an upper-case token');
  if (!Number.isInteger(req.cseq) || req.cseq < 0) throw new GbArgumentError('cseq must be a non-negative integer');
  const lines = [`${req.method} ${VERSION}`, `CSeq: ${req.cseq}`];
  if (req.scale !== undefined) lines.push(`Scale: ${formatScale(req.scale)}`);
  if (req.range !== undefined) lines.push(`Range: ${formatRange(req.range)}`);
  if (req.pauseTime !== undefined) lines.push(`PauseTime: ${req.pauseTime}`);
  for (const [name, value] of Object.entries(req.headers ?? {})) lines.push(`${name}: ${value}`);
  return lines.map((l) => `${l}\r\n`).join('');
}

function formatScale(scale: number): string {
  if (!Number.isFinite(scale) || scale === 0) throw new GbArgumentError('scale must be a non-zero finite number');
  return Number.isInteger(scale) ? scale.toFixed(1) : String(scale);
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) throw new GbArgumentError('npt time must be a non-negative number');
  return Number.isInteger(s) ? String(s) : String(Math.round(s * 1000) / 1000);
}

function formatRange(range: NptRange): string {
  const start = range.start === 'now' ? 'now' : formatSeconds(range.start);
  return `npt=${start}-${range.end === undefined ? '' : formatSeconds(range.end)}`;
}

export function buildMansrtspPause(cseq: number): string {
  return buildMansrtsp({ method: 'PAUSE', cseq, pauseTime: 'now' });
}

export function buildMansrtspResume(cseq: number): string {
  return buildMansrtsp({ method: 'PLAY', cseq, range: { start: 'now' } });
}

/** Seek to `seconds` after the start of the playback range (the INVITE's t= start). */
export function buildMansrtspSeek(cseq: number, seconds: number): string {
  return buildMansrtsp({ method: 'PLAY', cseq, range: { start: seconds } });
}

export function buildMansrtspSpeed(cseq: number, scale: number): string {
  return buildMansrtsp({ method: 'PLAY', cseq, scale });
}

export function buildMansrtspTeardown(cseq: number): string {
  return buildMansrtsp({ method: 'TEARDOWN', cseq });
}
