// SessionSnapshotStore on Redis. Keys of one holder share its hash tag, so each verb is one Lua script on one
// slot (Redis Cluster too): `vms:rec:{<holder>}:idx` (set of Call-IDs), `vms:rec:{<holder>}:s:<callId>`
// (snapshot JSON, PX), `vms:rec:{<holder>}:t:<callId>` (tombstone, PX). The recovery lock is one key per
// dialog, `vms:rec:lock:<callId>`, SET NX PX (STYLE §4: one verb = one atomic command). The client stays the caller's.
import type { RedisClient } from '@vms/cluster';
import { MediaError } from '@vms/media';
import { parseSnapshot, serializeSnapshot } from './session-snapshot.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import type { DialogSnapshot, IndexedSnapshot, SessionSnapshotStore, SnapshotCodec } from './session-snapshots.port.ts';

// KEYS: snapshot, index, tombstone. ARGV: json, ttl ms, callId. 0 when tombstoned.
const SAVE = `
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SADD', KEYS[2], ARGV[3])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1`;

// KEYS: snapshot, index, tombstone. ARGV: callId, tombstone ttl ms. The tombstone is written first.
const END = `
redis.call('SET', KEYS[3], '1', 'PX', tonumber(ARGV[2]))
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1`;

// KEYS: index. ARGV: prefix of snapshot keys, ttl ms, callId... Extends the index and the snapshots present.
const RENEW = `
local ttl = tonumber(ARGV[2])
for i = 3, #ARGV do redis.call('PEXPIRE', ARGV[1] .. ARGV[i], ttl) end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`;

// KEYS: index. ARGV: prefix of snapshot keys, limit. Flat list callId, json-or-false; drops expired entries.
const LIST = `
local ids = redis.call('SRANDMEMBER', KEYS[1], tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  local v = redis.call('GET', ARGV[1] .. id)
  if not v then redis.call('SREM', KEYS[1], id) end
  table.insert(out, id)
  table.insert(out, v)
end
return out`;

const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const SESSION_CODEC: SnapshotCodec<SessionSnapshot> = { serialize: serializeSnapshot, parse: parseSnapshot };

export function createRedisSessionSnapshots(client: RedisClient, prefix = 'vms:rec:'): SessionSnapshotStore {
  return createRedisSnapshotStore(client, prefix, SESSION_CODEC);
}

/** The same store for another kind of dialog snapshot, under its own prefix (cascade: upstream dialogs). */
export function createRedisSnapshotStore<T extends DialogSnapshot>(client: RedisClient, prefix: string, codec: SnapshotCodec<T>): SessionSnapshotStore<T> {
  const base = (holder: string): string => `${prefix}{${holder}}`;
  const keys = (holder: string, callId: string): [string, string, string] => [`${base(holder)}:s:${callId}`, `${base(holder)}:idx`, `${base(holder)}:t:${callId}`];
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new MediaError('MEDIA_ERR_STORE_UNAVAILABLE', `session snapshot ${what}: Redis unavailable`, { cause: err });
    }
  };
  return {
    save: (s, ttlMs) => run('save', async () => (await client.eval(SAVE, 3, ...keys(s.holder, s.dialog.callId), codec.serialize(s), ttlMs, s.dialog.callId)) === 1),
    renew: (holder, callIds, ttlMs) =>
      run('renew', async () => {
        await client.eval(RENEW, 1, `${base(holder)}:idx`, `${base(holder)}:s:`, ttlMs, ...callIds);
      }),
    end: (holder, callId, tombstoneTtlMs) =>
      run('end', async () => {
        await client.eval(END, 3, ...keys(holder, callId), callId, tombstoneTtlMs);
      }),
    exists: (holder, callId) => run('exists', async () => (await client.exists(keys(holder, callId)[0])) === 1),
    list: (holder, limit) =>
      run('list', async () => {
        const flat = (await client.eval(LIST, 1, `${base(holder)}:idx`, `${base(holder)}:s:`, limit)) as (string | null)[];
        const out: IndexedSnapshot<T>[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const callId = String(flat[i]);
          const json = flat[i + 1];
          if (typeof json !== 'string') {
            out.push({ callId, state: 'expired' });
            continue;
          }
          try {
            out.push({ callId, state: 'ok', snapshot: codec.parse(json) });
          } catch (err) {
            out.push({ callId, state: 'malformed', error: err as Error });
          }
        }
        return out;
      }),
    lock: (callId, by, ttlMs) =>
      run('lock', async () => {
        const key = `${prefix}lock:${callId}`;
        if ((await client.set(key, by, 'PX', ttlMs, 'NX')) === 'OK') return true;
        return (await client.get(key)) === by;
      }),
    unlock: (callId, by) =>
      run('unlock', async () => {
        await client.eval(UNLOCK, 1, `${prefix}lock:${callId}`, by);
      }),
  } satisfies SessionSnapshotStore<T>;
}
