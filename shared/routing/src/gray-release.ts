/**
 * Gray release decisions (Kamailio write-up §4: percentage, condition, time window; staged steps with
 * one-step rollback). Pure: the request's values and local time come in, a side comes out.
 *
 * Percentage: the key's stable hash gives a bucket 0..9999; a request is canary when bucket < percent × 100.
 * The same key always lands in the same bucket, so one caller or device stays on one side, and raising the
 * step only moves keys from stable to canary, never back.
 */
import { addressBytes, cidrContains, parseCidr, type Cidr } from './cidr.ts';
import { hashString } from './hash.ts';
import { compileWindow, inWindow, windowProblems, type CompiledWindow, type ZoneClock } from './time-window.ts';
import type { ConditionField, GrayRelease, ReleaseCondition, ReleaseKey } from './types.ts';

/** Longest regex source accepted: conditions are operator input, and a regex runs on every request. */
export const MAX_REGEX_LENGTH = 200;
/** Salt so the release bucket is independent of the hash-based destination choice of the same key. */
const RELEASE_SEED = 0x5eed1e;

export interface ReleaseInput {
  readonly callId?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly device?: string | undefined;
  readonly caller?: string | undefined;
  readonly callee?: string | undefined;
  /** Source address of the request (IPv4 or IPv6). */
  readonly source?: string | undefined;
}

type CompiledCondition =
  | { readonly field: ConditionField; readonly op: 'exact' | 'prefix'; readonly value: string }
  | { readonly field: ConditionField; readonly op: 'regex'; readonly re: RegExp }
  | { readonly field: ConditionField; readonly op: 'cidr'; readonly cidr: Cidr };

export interface CompiledRelease {
  readonly canarySet: number;
  readonly key: ReleaseKey;
  readonly step: number;
  /** Percent × 100 of the step in force (0 when rolled back). */
  readonly threshold: number;
  readonly percent: number;
  readonly conditions: readonly CompiledCondition[];
  readonly window: CompiledWindow | undefined;
}

export function releaseProblems(r: GrayRelease): string[] {
  // shapes first: a release comes from operator JSON and must not throw here
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return ['must be an object'];
  if (r.conditions !== undefined && !Array.isArray(r.conditions)) return ['conditions must be a list'];
  if (r.window !== undefined && (r.window === null || typeof r.window !== 'object')) return ['window must be an object'];
  const out: string[] = [];
  if (!Array.isArray(r.steps) || r.steps.length === 0) out.push('steps must list at least one percentage');
  else {
    r.steps.forEach((p, i) => {
      if (typeof p !== 'number' || !(p > 0 && p <= 100)) out.push(`step ${i} (${String(p)}) is not a percentage in (0, 100]`);
      else if (Math.round(p * 100) !== p * 100) out.push(`step ${i} (${p}) has more than two decimals`);
      if (i > 0 && !(p > r.steps[i - 1]!)) out.push(`step ${i} (${String(p)}) does not grow`);
    });
    if (!Number.isInteger(r.step) || r.step < -1 || r.step >= r.steps.length) out.push(`step index ${String(r.step)} is not -1 or an index of steps`);
  }
  if (!['callid', 'from', 'to', 'device', 'caller', 'callee'].includes(r.key)) out.push(`key '${String(r.key)}' is not one of callid, from, to, device, caller, callee`);
  for (const [i, c] of (r.conditions ?? []).entries()) for (const p of conditionProblems(c)) out.push(`condition ${i}: ${p}`);
  if (r.window !== undefined) for (const p of windowProblems(r.window)) out.push(`window: ${p}`);
  return out;
}

function conditionProblems(c: ReleaseCondition): string[] {
  if (c === null || typeof c !== 'object') return ['must be an object'];
  if (!['caller', 'callee', 'device', 'source'].includes(c.field)) return [`field '${String(c.field)}' is not caller, callee, device or source`];
  if (typeof c.value !== 'string') return ['value must be a string'];
  switch (c.op) {
    case 'exact':
    case 'prefix':
      return [];
    case 'regex':
      if (c.value.length > MAX_REGEX_LENGTH) return [`regex longer than ${MAX_REGEX_LENGTH}`];
      try {
        new RegExp(c.value);
        return [];
      } catch {
        return [`'${c.value}' is not a valid regular expression`];
      }
    case 'cidr':
      if (c.field !== 'source') return ['cidr applies to the source address only'];
      return parseCidr(c.value) === undefined ? [`'${c.value}' is not an IPv4 or IPv6 CIDR`] : [];
    default:
      return [`op '${String(c.op)}' is not exact, prefix, regex or cidr`];
  }
}

/** Compiles a valid release (see releaseProblems); `canarySet` is the set's index in the compiled table. */
export function compileRelease(r: GrayRelease, canarySet: number): CompiledRelease {
  const percent = r.step < 0 ? 0 : r.steps[r.step]!;
  return {
    canarySet,
    key: r.key,
    step: r.step,
    percent,
    threshold: Math.round(percent * 100),
    conditions: (r.conditions ?? []).map((c): CompiledCondition => {
      if (c.op === 'regex') return { field: c.field, op: 'regex', re: new RegExp(c.value) };
      if (c.op === 'cidr') return { field: c.field, op: 'cidr', cidr: parseCidr(c.value)! };
      return { field: c.field, op: c.op, value: c.value };
    }),
    window: r.window === undefined ? undefined : compileWindow(r.window),
  };
}

/** Bucket 0..9999 of a release key. */
export function releaseBucket(key: string): number {
  return hashString(key, RELEASE_SEED) % 10_000;
}

function keyValue(key: ReleaseKey, req: ReleaseInput): string | undefined {
  switch (key) {
    case 'callid':
      return req.callId;
    case 'from':
      return req.from;
    case 'to':
      return req.to;
    case 'device':
      return req.device;
    case 'caller':
      return req.caller;
    case 'callee':
      return req.callee;
  }
}

function conditionHolds(c: CompiledCondition, req: ReleaseInput): boolean {
  const v = req[c.field];
  if (v === undefined) return false;
  switch (c.op) {
    case 'exact':
      return v === c.value;
    case 'prefix':
      return v.startsWith(c.value);
    case 'regex':
      return c.re.test(v);
    case 'cidr': {
      const b = addressBytes(v);
      return b !== undefined && cidrContains(c.cidr, b);
    }
  }
}

/**
 * Whether the request goes to the canary side. A request without the key's value stays stable (a release
 * never guesses). Conditions narrow who is eligible; the window narrows when.
 */
export function onCanary(r: CompiledRelease, req: ReleaseInput & { readonly now: number }, zone: ZoneClock): boolean {
  if (r.threshold === 0) return false;
  for (const c of r.conditions) if (!conditionHolds(c, req)) return false;
  if (r.window !== undefined && !inWindow(r.window, zone.local(req.now))) return false;
  if (r.threshold >= 10_000) return true;
  const k = keyValue(r.key, req);
  return k !== undefined && releaseBucket(k) < r.threshold;
}
