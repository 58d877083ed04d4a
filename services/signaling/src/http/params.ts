// Request parameter readers: each either returns a typed value or throws BadParameterError naming the
// parameter. Handlers never touch raw query objects.
import { isGbId } from '../core/gb-id.ts';
import { parseApiTime, type GbLocalTime } from '../core/gb-time.ts';
import { BadParameterError } from '../errors/catalog.ts';

export type RawParams = Readonly<Record<string, unknown>>;

export function optionalText(params: RawParams, name: string): string | undefined {
  const v = params[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new BadParameterError(name, 'given more than once');
  if (typeof v !== 'string') throw new BadParameterError(name, 'must be text');
  const t = v.trim();
  return t === '' ? undefined : t;
}

export function requiredText(params: RawParams, name: string): string {
  const v = optionalText(params, name);
  if (v === undefined) throw new BadParameterError(name, 'is required');
  return v;
}

/** A 20-digit GB28181 code (device, channel). */
export function gbId(params: RawParams, name: string): string {
  const v = requiredText(params, name);
  if (!isGbId(v)) throw new BadParameterError(name, 'must be a 20-digit code');
  return v;
}

export function oneOf<T extends string>(params: RawParams, name: string, allowed: readonly T[]): T {
  const v = requiredText(params, name).toLowerCase();
  if (!(allowed as readonly string[]).includes(v)) throw new BadParameterError(name, `must be one of ${allowed.join(', ')}`);
  return v as T;
}

export function optionalInt(params: RawParams, name: string, min: number, max: number): number | undefined {
  const v = optionalText(params, name);
  if (v === undefined) return undefined;
  if (!/^-?\d{1,10}$/.test(v)) throw new BadParameterError(name, `must be an integer ${min}-${max}`);
  const n = Number(v);
  if (n < min || n > max) throw new BadParameterError(name, `must be an integer ${min}-${max}`);
  return n;
}

export function optionalBoolean(params: RawParams, name: string): boolean | undefined {
  const v = optionalText(params, name)?.toLowerCase();
  if (v === undefined) return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new BadParameterError(name, 'must be true or false');
}

/** SPEC §12 times: ISO-8601 or `yyyy-MM-dd HH:mm:ss`. */
export function time(params: RawParams, name: string, utcOffsetMinutes: number): GbLocalTime {
  const parsed = parseApiTime(requiredText(params, name), utcOffsetMinutes);
  if (parsed === null) throw new BadParameterError(name, 'must be ISO-8601 or yyyy-MM-dd HH:mm:ss');
  return parsed;
}

/** Opaque query serial numbers handed out by `POST /vms/record/query`. */
export function serial(params: RawParams, name: string): string {
  const v = requiredText(params, name);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(v)) throw new BadParameterError(name, 'must be a query serial number');
  return v;
}

/** BladeX-style paging: `current` (1-based) and `size`. */
export function paging(params: RawParams): { page: number; size: number } {
  return { page: optionalInt(params, 'current', 1, 1_000_000) ?? 1, size: optionalInt(params, 'size', 1, 1000) ?? 20 };
}

/** A signed decimal of at most 3 integer and 4 fraction digits within [min, max] (PTZ degrees, zoom), as text. */
export function decimal(params: RawParams, name: string, min: number, max: number): string {
  const v = requiredText(params, name);
  if (!/^-?\d{1,3}(\.\d{1,4})?$/.test(v) || Number(v) < min || Number(v) > max) throw new BadParameterError(name, `must be a decimal ${min}-${max}`);
  return v;
}

/** Printable text of at most `max` characters (names sent to devices). */
export function optionalLabel(params: RawParams, name: string, max: number): string | undefined {
  const v = optionalText(params, name);
  if (v === undefined) return undefined;
  if (v.length > max || /[\u0000-\u001f\u007f]/.test(v)) throw new BadParameterError(name, `must be at most ${max} characters, no control characters`);
  return v;
}

export function requiredInt(params: RawParams, name: string, min: number, max: number): number {
  const v = optionalInt(params, name, min, max);
  if (v === undefined) throw new BadParameterError(name, 'is required');
  return v;
}
