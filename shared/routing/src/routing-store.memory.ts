/**
 * RoutingStore in memory, for the zero-configuration single instance and for tests: the same semantics as
 * the MySQL store (published versions are frozen copies, rollback moves the pointer).
 */
import { tableDataReader } from './compile-stored.ts';
import { RoutingError } from './errors.ts';
import type { DraftRule, PublishRequest, PublishResult, RoutingDraft, RoutingStore, TableData, VersionInfo } from './routing-store.port.ts';
import type { Destination, DestinationSet } from './types.ts';

export function createMemoryRoutingStore(clock: { now(): number } = Date): RoutingStore {
  const destinations = new Map<string, Destination>();
  const sets = new Map<string, DestinationSet>();
  const rules = new Map<number, DraftRule>();
  const versions = new Map<number, { info: VersionInfo; data: TableData }>();
  let nextRuleId = 1;
  let current: number | undefined;
  let closed = false;
  const open = (): void => {
    if (closed) throw new RoutingError('ROUTING_ERR_CLOSED', 'routing store is closed');
  };
  const copy = <T>(x: T): T => structuredClone(x);

  const store: RoutingStore = {
    async draft(): Promise<RoutingDraft> {
      open();
      return copy({ destinations: [...destinations.values()], sets: [...sets.values()], rules: [...rules.values()].sort((a, b) => a.id - b.id) });
    },
    async putDestination(d) {
      open();
      destinations.set(d.id, copy(d));
    },
    async removeDestination(id) {
      open();
      return destinations.delete(id);
    },
    async putSet(s) {
      open();
      sets.set(s.id, copy(s));
    },
    async removeSet(id) {
      open();
      return sets.delete(id);
    },
    async addRule(r) {
      open();
      const id = nextRuleId++;
      rules.set(id, copy({ ...r, id }));
      return id;
    },
    async putRule(r) {
      open();
      if (!rules.has(r.id)) return false;
      rules.set(r.id, copy(r));
      return true;
    },
    async removeRule(id) {
      open();
      return rules.delete(id);
    },
    async publish(req: PublishRequest): Promise<PublishResult> {
      open();
      const version = Math.max(0, ...versions.keys()) + 1;
      const data: TableData = copy({
        version,
        destinations: [...destinations.values()],
        sets: [...sets.values()],
        rules: [...rules.values()]
          .filter((r) => r.enabled)
          .sort((a, b) => a.id - b.id)
          .map(({ enabled: _enabled, ...rule }) => rule),
      });
      const checked = req.check(data);
      if (checked.issues.length > 0) return { ok: false, issues: checked.issues, more: checked.more };
      const info: VersionInfo = { version, parent: current, publishedAt: clock.now(), publishedBy: req.by, comment: req.comment, ruleCount: data.rules.length };
      versions.set(version, { info, data: Object.freeze(data) });
      current = version;
      return { ok: true, version, ruleCount: data.rules.length };
    },
    async rollback() {
      open();
      const parent = current === undefined ? undefined : versions.get(current)?.info.parent;
      if (current === undefined || parent === undefined) throw new RoutingError('ROUTING_ERR_NOTHING_TO_ROLL_BACK', 'no earlier version to roll back to');
      const from = current;
      current = parent;
      return { from, to: parent };
    },
    async currentVersion() {
      open();
      return current;
    },
    async loadVersion(version) {
      open();
      const v = versions.get(version);
      return v === undefined ? undefined : copy(v.data);
    },
    async readVersion(version) {
      open();
      const v = versions.get(version);
      // the frozen data itself: pages are read, never kept, by the compiler
      return v === undefined ? undefined : tableDataReader({ ...v.data, destinations: copy(v.data.destinations), sets: copy(v.data.sets) });
    },
    async versions(limit) {
      open();
      return [...versions.values()]
        .map((v) => v.info)
        .sort((a, b) => b.version - a.version)
        .slice(0, limit);
    },
    async close() {
      closed = true;
    },
  };
  return store;
}
