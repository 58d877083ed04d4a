// API times (SPEC §12): `yyyy-MM-dd HH:mm:ss` or ISO-8601. GB28181 MANSCDP times (e.g. RecordInfo
// StartTime) are zone-less wall-clock `yyyy-MM-ddTHH:mm:ss`. A time without a zone is taken as
// wall-clock as written; one with `Z` or an offset is converted to the platform's UTC offset.

/** Zone-less wall-clock time `yyyy-MM-ddTHH:mm:ss`, as GB28181 bodies carry it. */
export type GbLocalTime = string;

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function wallClock(ms: number): GbLocalTime {
  const d = new Date(ms);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/**
 * Parses an API time into GB wall-clock time; null when malformed or not a real date.
 * `utcOffsetMinutes` is the platform's offset (e.g. 480 for UTC+8), used only for inputs with a zone.
 */
export function parseApiTime(text: string, utcOffsetMinutes: number): GbLocalTime | null {
  const m = PATTERN.exec(text.trim());
  if (m === null) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(asUtc);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    return null;
  }
  const zone = m[8];
  if (zone === undefined) return wallClock(asUtc);
  let offset = 0;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const sign = digits.startsWith('-') ? -1 : 1;
    const oh = Number(digits.slice(1, 3));
    const om = Number(digits.slice(3, 5));
    if (oh > 23 || om > 59) return null;
    offset = sign * (oh * 60 + om);
  }
  return wallClock(asUtc - offset * 60_000 + utcOffsetMinutes * 60_000);
}
