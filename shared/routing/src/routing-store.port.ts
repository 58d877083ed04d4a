/**
 * Where routing tables live (SPEC §10): a draft operators edit row by row, immutable published versions,
 * and a pointer to the version in force. Publishing validates the whole draft inside the store's own
 * consistency boundary (a transaction in MySQL) and bumps the version; rolling back moves the pointer to
 * the version the current one was published over. Domain types only (STYLE §4).
 */
import type { TableIssue } from './compile.ts';
import type { Destination, DestinationSet, Rule } from './types.ts';

/** A rule as edited: enabled = false keeps it in the draft but out of what is published. */
export interface DraftRule extends Rule {
  readonly enabled: boolean;
}

export interface RoutingDraft {
  readonly destinations: readonly Destination[];
  readonly sets: readonly DestinationSet[];
  readonly rules: readonly DraftRule[];
}

/** One published version's content (the time zone comes from the platform's configuration). */
export interface TableData {
  readonly version: number;
  readonly destinations: readonly Destination[];
  readonly sets: readonly DestinationSet[];
  readonly rules: readonly Rule[];
}

/**
 * One published version read for compiling: its topology, then its rules a page at a time (id order), so
 * a million rules never sit in memory as objects at once (compile-stored.ts packs each page).
 */
export interface VersionReader {
  readonly version: number;
  readonly destinations: readonly Destination[];
  readonly sets: readonly DestinationSet[];
  /** Rules the version holds (sizes the packed columns once). */
  readonly ruleCount: number;
  /** Pages of rules, each read when asked for. */
  pages(): AsyncIterable<readonly Rule[]>;
}

export interface VersionInfo {
  readonly version: number;
  /** The version in force when this one was published: where a rollback goes. */
  readonly parent: number | undefined;
  readonly publishedAt: number;
  readonly publishedBy: string;
  readonly comment: string;
  readonly ruleCount: number;
}

export type PublishResult =
  | { readonly ok: true; readonly version: number; readonly ruleCount: number }
  | { readonly ok: false; readonly issues: readonly TableIssue[]; readonly more: number };

export interface PublishRequest {
  readonly by: string;
  readonly comment: string;
  /** Validates what would be published (the enabled draft rules) with the would-be version number. */
  readonly check: (data: TableData) => { readonly issues: readonly TableIssue[]; readonly more: number };
}

export interface RoutingStore {
  draft(): Promise<RoutingDraft>;
  putDestination(d: Destination): Promise<void>;
  /** False when there was no such destination. */
  removeDestination(id: string): Promise<boolean>;
  /** Creates or replaces a set with its members. */
  putSet(s: DestinationSet): Promise<void>;
  removeSet(id: string): Promise<boolean>;
  /** Creates a rule; the store gives the id. */
  addRule(r: Omit<DraftRule, 'id'>): Promise<number>;
  /** Replaces a rule; false when there is no rule with that id. */
  putRule(r: DraftRule): Promise<boolean>;
  removeRule(id: number): Promise<boolean>;

  publish(req: PublishRequest): Promise<PublishResult>;
  /** Points the current version back at its parent: ROUTING_ERR_NOTHING_TO_ROLL_BACK when it has none. */
  rollback(): Promise<{ readonly from: number; readonly to: number }>;
  /** The version in force; undefined before the first publish. What every instance polls. */
  currentVersion(): Promise<number | undefined>;
  /** A published version's content; undefined when there is no such version. */
  loadVersion(version: number): Promise<TableData | undefined>;
  /** A published version for compiling, its rules in pages; undefined when there is no such version. */
  readVersion(version: number): Promise<VersionReader | undefined>;
  /** Most recent first. */
  versions(limit: number): Promise<VersionInfo[]>;
  close(): Promise<void>;
}
