// SessionSnapshotStore in process memory: a standalone instance (no Redis) has nobody to hand its sessions to,
// but the same journal runs, so the session code has one path. Snapshots are serialized and parsed as in
// Redis (what is saved is what a reader gets back). Expiry judged on the clock passed in.
import type { Clock } from '../core/clock.ts';
import { parseSnapshot, serializeSnapshot } from './session-snapshot.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import type { DialogSnapshot, IndexedSnapshot, SessionSnapshotStore, SnapshotCodec } from './session-snapshots.port.ts';

export function createMemorySessionSnapshots(clock: Pick<Clock, 'now'>): SessionSnapshotStore {
  return createMemorySnapshotStore<SessionSnapshot>(clock, { serialize: serializeSnapshot, parse: parseSnapshot });
}

export function createMemorySnapshotStore<T extends DialogSnapshot>(clock: Pick<Clock, 'now'>, codec: SnapshotCodec<T>): SessionSnapshotStore<T> {
  const snaps = new Map<string, { json: string; until: number }>();
  const index = new Map<string, Set<string>>();
  const tombs = new Map<string, number>();
  const locks = new Map<string, { by: string; until: number }>();
  const key = (holder: string, callId: string): string => `${holder}\n${callId}`;
  const live = <T extends { until: number }>(m: Map<string, T>, k: string): T | undefined => {
    const v = m.get(k);
    if (v !== undefined && v.until <= clock.now()) {
      m.delete(k);
      return undefined;
    }
    return v;
  };
  return {
    async save(s, ttlMs) {
      const k = key(s.holder, s.dialog.callId);
      const tomb = tombs.get(k);
      if (tomb !== undefined && tomb > clock.now()) return false;
      snaps.set(k, { json: codec.serialize(s), until: clock.now() + ttlMs });
      let set = index.get(s.holder);
      if (set === undefined) index.set(s.holder, (set = new Set()));
      set.add(s.dialog.callId);
      return true;
    },
    async renew(holder, callIds, ttlMs) {
      for (const id of callIds) {
        const v = live(snaps, key(holder, id));
        if (v !== undefined) v.until = clock.now() + ttlMs;
      }
    },
    async end(holder, callId, tombstoneTtlMs) {
      const k = key(holder, callId);
      tombs.set(k, clock.now() + tombstoneTtlMs);
      snaps.delete(k);
      index.get(holder)?.delete(callId);
      for (const [t, until] of tombs) if (until <= clock.now()) tombs.delete(t); // bounded by the live ones
    },
    async exists(holder, callId) {
      return live(snaps, key(holder, callId)) !== undefined;
    },
    async list(holder, limit) {
      const out: IndexedSnapshot<T>[] = [];
      const set = index.get(holder);
      for (const callId of [...(set ?? [])].slice(0, limit)) {
        const v = live(snaps, key(holder, callId));
        if (v === undefined) {
          set?.delete(callId);
          out.push({ callId, state: 'expired' });
          continue;
        }
        try {
          out.push({ callId, state: 'ok', snapshot: codec.parse(v.json) });
        } catch (err) {
          out.push({ callId, state: 'malformed', error: err as Error });
        }
      }
      return out;
    },
    async lock(callId, by, ttlMs) {
      const held = live(locks, callId);
      if (held !== undefined) return held.by === by;
      locks.set(callId, { by, until: clock.now() + ttlMs });
      return true;
    },
    async unlock(callId, by) {
      if (locks.get(callId)?.by === by) locks.delete(callId);
    },
  } satisfies SessionSnapshotStore<T>;
}
