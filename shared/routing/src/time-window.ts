/**
 * Time validity of rules and releases, read in the platform's time zone (SPEC §10). The clock is passed in;
 * the zone's offset comes from Intl and is cached per 15-minute span of UTC: every tzdb offset change falls
 * on a quarter hour, so within one span the offset is constant, and a decision costs a few arithmetic
 * operations instead of an Intl call.
 */
import type { TimeWindow } from './types.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const SPAN = 15 * MINUTE;

/** Local calendar view of an instant. */
export interface LocalTime {
  /** Days since 1970-01-01 of the local date. */
  readonly day: number;
  /** ISO week day, 1 = Monday … 7 = Sunday. */
  readonly weekday: number;
  /** Minutes since local midnight. */
  readonly minute: number;
}

export class ZoneClock {
  readonly #fmt: Intl.DateTimeFormat;
  #span = Number.NaN;
  #offset = 0;

  /** Throws RangeError for a zone Intl does not know (validation reports it first). */
  constructor(readonly timeZone: string) {
    this.#fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** Offset of local time from UTC at `now`, in ms. */
  offsetAt(now: number): number {
    const span = Math.floor(now / SPAN);
    if (span !== this.#span) {
      this.#span = span;
      this.#offset = this.#computeOffset(span * SPAN);
    }
    return this.#offset;
  }

  local(now: number): LocalTime {
    const t = now + this.offsetAt(now);
    const day = Math.floor(t / DAY);
    // 1970-01-01 was a Thursday (ISO 4)
    const weekday = ((((day + 3) % 7) + 7) % 7) + 1;
    return { day, weekday, minute: Math.floor((t - day * DAY) / MINUTE) };
  }

  #computeOffset(at: number): number {
    const parts: Record<string, number> = {};
    for (const p of this.#fmt.formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
    const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
    return asUtc - (at - (at % 1000));
  }
}

/** A window prepared for matching: dates as day numbers, days as a bit set, times as minutes. */
export interface CompiledWindow {
  readonly fromDay: number;
  readonly untilDay: number;
  /** Bit d set for ISO week day d (1..7); 0b11111110 = every day. */
  readonly dayBits: number;
  readonly start: number;
  readonly end: number;
}

const EVERY_DAY = 0b11111110;

export function parseDay(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (m === null) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return t / DAY;
}

export function parseClock(s: string): number | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(s);
  return m === null ? undefined : Number(m[1]) * 60 + Number(m[2]);
}

/** Problems of a window, in words (empty when valid). */
export function windowProblems(w: TimeWindow): string[] {
  if (w === null || typeof w !== 'object' || Array.isArray(w)) return ['must be an object'];
  for (const k of ['from', 'until', 'start', 'end'] as const) if (w[k] !== undefined && typeof w[k] !== 'string') return [`${k} must be text`];
  const out: string[] = [];
  const from = w.from === undefined ? -Infinity : parseDay(w.from);
  const until = w.until === undefined ? Infinity : parseDay(w.until);
  if (from === undefined) out.push(`from '${w.from}' is not a date YYYY-MM-DD`);
  if (until === undefined) out.push(`until '${w.until}' is not a date YYYY-MM-DD`);
  if (from !== undefined && until !== undefined && from > until) out.push('from is after until');
  if (w.days !== undefined) {
    if (!Array.isArray(w.days) || w.days.length === 0) out.push('days must list ISO week days 1..7');
    else for (const d of w.days) if (!Number.isInteger(d) || d < 1 || d > 7) out.push(`day ${String(d)} is not an ISO week day 1..7`);
  }
  if ((w.start === undefined) !== (w.end === undefined)) out.push('start and end go together');
  if (w.start !== undefined && parseClock(w.start) === undefined) out.push(`start '${w.start}' is not HH:MM`);
  if (w.end !== undefined && parseClock(w.end) === undefined) out.push(`end '${w.end}' is not HH:MM`);
  if (w.start !== undefined && w.start === w.end) out.push('start equals end (an empty window)');
  return out;
}

/** Compiles a valid window (see windowProblems). */
export function compileWindow(w: TimeWindow): CompiledWindow {
  let dayBits = EVERY_DAY;
  if (w.days !== undefined) {
    dayBits = 0;
    for (const d of w.days) dayBits |= 1 << d;
  }
  return {
    fromDay: w.from === undefined ? -Infinity : parseDay(w.from)!,
    untilDay: w.until === undefined ? Infinity : parseDay(w.until)!,
    dayBits,
    start: w.start === undefined ? 0 : parseClock(w.start)!,
    end: w.end === undefined ? 24 * 60 : parseClock(w.end)!,
  };
}

/**
 * Whether local time `t` is inside the window. A daily window that spans midnight (22:00–02:00) belongs to
 * the day it starts on: Saturday 01:00 is inside a Friday-only 22:00–02:00 window, Friday 01:00 is not.
 */
export function inWindow(w: CompiledWindow, t: LocalTime): boolean {
  let day = t.day;
  let weekday = t.weekday;
  if (w.start <= w.end) {
    if (t.minute < w.start || t.minute >= w.end) return false;
  } else if (t.minute < w.end) {
    day -= 1; // the early-morning part of yesterday's window
    weekday = weekday === 1 ? 7 : weekday - 1;
  } else if (t.minute < w.start) {
    return false;
  }
  if (day < w.fromDay || day > w.untilDay) return false;
  return (w.dayBits & (1 << weekday)) !== 0;
}
