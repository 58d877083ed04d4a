// The rows of the routing tables (V007) as both stores hold them: MySQL/MariaDB in the cluster
// (routing-store.mysql.ts) and SQLite in the standalone instance (services/signaling). One mapping, so a
// column added to one store cannot be forgotten in the other.
import type { Destination, GrayRelease, MatchField, Rule, TimeWindow } from './types.ts';

export interface RoutingRuleRow {
  /** BIGINT: mysql2 may hand it as a string. */
  id: number | string;
  grp: string;
  field: MatchField;
  prefix: string;
  priority: number;
  set_id: string;
  /** JSON: text from MariaDB and SQLite, an object from MySQL. */
  time_window: unknown;
  gray_release: unknown;
  enabled?: number;
}

export interface RoutingDestinationRow {
  id: string;
  kind: Destination['kind'];
  address: string;
  attrs: unknown;
}

/** A JSON column: parsed when the driver hands text, as is when it hands an object; null → undefined. */
export function jsonColumn<T>(v: unknown): T | undefined {
  if (v === null || v === undefined) return undefined;
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

export function ruleFromRow(r: RoutingRuleRow): Rule {
  const window = jsonColumn<TimeWindow>(r.time_window);
  const release = jsonColumn<GrayRelease>(r.gray_release);
  return {
    id: Number(r.id),
    group: r.grp,
    field: r.field,
    prefix: r.prefix,
    priority: r.priority,
    setId: r.set_id,
    ...(window === undefined ? {} : { window }),
    ...(release === undefined ? {} : { release }),
  };
}

/**
 * A rule from a row read as an array in RULE_COLUMNS order (mysql2 `rowsAsArray`: no object per row with
 * eight named properties; a reload converts a million of them). Same result as ruleFromRow.
 */
export function ruleFromArray(a: readonly unknown[]): Rule {
  const window = jsonColumn<TimeWindow>(a[6]);
  const release = jsonColumn<GrayRelease>(a[7]);
  const r: { -readonly [K in keyof Rule]: Rule[K] } = { id: Number(a[0]), group: a[1] as string, field: a[2] as MatchField, prefix: a[3] as string, priority: a[4] as number, setId: a[5] as string };
  if (window !== undefined) r.window = window;
  if (release !== undefined) r.release = release;
  return r;
}

export function destinationFromRow(r: RoutingDestinationRow): Destination {
  const attrs = jsonColumn<Record<string, string>>(r.attrs);
  return { id: r.id, kind: r.kind, address: r.address, ...(attrs === undefined ? {} : { attrs }) };
}
