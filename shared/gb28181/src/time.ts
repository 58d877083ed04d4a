/**
 * Time formats of GB/T 28181. MANSCDP times (StartTime, AlarmTime, DeviceTime... §A.2 `dateTime`)
 * are `yyyy-MM-ddTHH:mm:ss` in local time without a zone; the Date header of the REGISTER 200 OK,
 * which devices use to set their clock (§9.10), adds milliseconds; SDP `t=` of playback/download
 * (§9.8, §9.9) carries seconds since 1970 in practice, not NTP time. The operator API accepts ISO-8601 and
 * `yyyy-MM-dd HH:mm:ss` (SPEC §12).
 *
 * Local time is explicit: every function takes the UTC offset in minutes (China: +480). Without it
 * the host's offset for that instant is used, which only tests and single-zone deployments want.
 */
import { GbTimeError } from './errors.ts';

const MS_PER_MINUTE = 60_000;
const MS_PER_SECOND = 1000;
const TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?:(Z)|([+-])(\d{2}):?(\d{2}))?$/i;

function hostOffsetMinutes(date: Date): number {
  return -date.getTimezoneOffset();
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function checkDate(date: Date): void {
  if (Number.isNaN(date.getTime())) throw new GbTimeError('invalid date');
}

/** `yyyy-MM-ddTHH:mm:ss` in the given UTC offset (default: host local). */
export function formatGbTime(date: Date, utcOffsetMinutes: number = hostOffsetMinutes(date)): string {
  checkDate(date);
  const d = new Date(date.getTime() + utcOffsetMinutes * MS_PER_MINUTE);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** `yyyy-MM-ddTHH:mm:ss.SSS`, the Date header of the REGISTER 200 OK (time sync, §9.10). */
export function formatGbDateHeader(date: Date, utcOffsetMinutes: number = hostOffsetMinutes(date)): string {
  const ms = ((date.getTime() % MS_PER_SECOND) + MS_PER_SECOND) % MS_PER_SECOND;
  return `${formatGbTime(date, utcOffsetMinutes)}.${pad(ms, 3)}`;
}

/**
 * formatGbDateHeader for epoch milliseconds in a fixed offset, the seconds' text kept while the second is
 * the same (issue 11: every registration's 200 carries one; a Date and six padded fields each were ~4k
 * instructions). Not for many callers at once: one cache per formatter.
 */
export function gbDateHeaderFormatter(utcOffsetMinutes: number): (epochMs: number) => string {
  let second = NaN;
  let text = '';
  return (epochMs) => {
    const t = Math.trunc(epochMs); // as a Date holds it
    const s = Math.floor(t / MS_PER_SECOND);
    if (s !== second) {
      text = formatGbTime(new Date(s * MS_PER_SECOND), utcOffsetMinutes);
      second = s;
    }
    const ms = t - s * MS_PER_SECOND;
    return `${text}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}`;
  };
}

/**
 * Parses `yyyy-MM-ddTHH:mm:ss`, `yyyy-MM-dd HH:mm:ss`, optional fraction, optional `Z` / `±hh:mm`.
 * A time without zone is read in `utcOffsetMinutes` (default: host local).
 */
export function parseGbTime(text: string, utcOffsetMinutes?: number): Date {
  const m = TIME_RE.exec(text.trim());
  if (m === null) throw new GbTimeError('unrecognised time format');
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    throw new GbTimeError('time field out of range');
  }
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(wall);
  // Also refuses years 0-99, which Date.UTC would move to 1900-1999.
  if (check.getUTCDate() !== day || check.getUTCFullYear() !== year) throw new GbTimeError('no such calendar day');
  let offset: number;
  if (m[8] !== undefined) offset = 0;
  else if (m[9] !== undefined) offset = (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  else if (utcOffsetMinutes !== undefined) offset = utcOffsetMinutes;
  else return hostLocal(year, month, day, hour, minute, second, ms);
  return new Date(wall - offset * MS_PER_MINUTE);
}

function hostLocal(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): Date {
  return new Date(y, mo - 1, d, h, mi, s, ms);
}

/** Seconds since 1970 as used by SDP `t=` in playback/download INVITEs. */
export function toSdpTime(date: Date): string {
  checkDate(date);
  return String(Math.floor(date.getTime() / MS_PER_SECOND));
}

export function fromSdpTime(value: string): Date {
  if (!/^\d{1,12}$/.test(value.trim())) throw new GbTimeError('SDP time must be decimal seconds');
  return new Date(Number(value.trim()) * MS_PER_SECOND);
}
