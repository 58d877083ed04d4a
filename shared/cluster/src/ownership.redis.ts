/**
 * OwnershipStore on Redis, single server or Redis Cluster (SPEC §3). One key per device,
 * `<prefix>{<deviceId>}`: the hash tag pins each key's slot to the device id, so the key can never be
 * split from companion keys a later feature adds for the same device. Every verb is one atomic
 * command or script: Lua SET … PX with the move notice (claim), GET, Lua compare-and-delete (release),
 * Lua renew-if-ours (renewMany). Claims that move a device are announced on `<prefix>moved` (watchMoves).
 *
 * Batches (OWN-5), measured with 10 000 devices on one local Redis (2-core VM):
 *  - one SET per key, auto-pipelined: ~300 ms; an explicit pipeline is no faster (client-side cost
 *    per command dominates);
 *  - one Lua script per 500 keys: ~50 ms; MGET per 500 keys: ~25 ms instead of ~260 ms.
 * So a single server gets the chunked script / MGET. In cluster mode multi-key commands must stay in
 * one slot and device keys spread over all slots, so batches are one command per key, which ioredis
 * auto-pipelining groups into one pipeline per node (~300 ms per 10 000 on a local 3-node cluster).
 */
import type { Redis } from 'ioredis';
import { encodedScript } from './encoded-script.redis.ts';
import { StoreClosedError } from './errors.ts';
import { createMoveWatch } from './ownership-moves.redis.ts';
import { assertTtl, type OwnershipClaim, type OwnershipStore } from './ownership.port.ts';
import type { RedisClient } from './redis-client.ts';
import { toOwnershipError } from './redis-errors.ts';

export interface RedisOwnershipOptions {
  /** Default "vms:owner:". Tests use a unique prefix per case. */
  keyPrefix?: string;
}

/** Keys per multi-key command on a single server: small enough not to stall Redis (< 1 ms each). */
const CHUNK = 500;

// SPEC OWN-3: delete only if still ours. GET and DEL inside one script are atomic on the server.
const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

// Claim unless someone holds it; either way return the owner. One script: SET NX and the GET of the
// holder are atomic together (a plain SET NX GET needs Redis 7 and is refused on some proxies).
const CLAIM_IF_VACANT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return ARGV[1]
end
return redis.call('GET', KEYS[1])`;

// OWN-1 / OWN-4 / OWN-5: claims of one instance (one script per chunk on a single server, one key per
// script in a cluster), each overwriting whoever held it (SET … GET, Redis ≥ 6.2); the devices taken
// from another instance are announced in the same atomic step, one PUBLISH per script (watchMoves), so
// their previous owner stops acting for them at once. ARGV[1] = owner, ARGV[2] = channel,
// ARGV[i + 2] = TTL (ms) of KEYS[i]. A re-registration on the same owner publishes nothing.
const CLAIM_MANY = `
local taken = {}
for i = 1, #KEYS do
  local previous = redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[i + 2], 'GET')
  if previous and previous ~= ARGV[1] then
    taken[#taken + 1] = KEYS[i]
    taken[#taken + 1] = previous
  end
end
if #taken > 0 then
  redis.call('PUBLISH', ARGV[2], cjson.encode({ARGV[1], taken}))
end
return #KEYS`;
const CLAIM_COMMAND = 'vmsClaimOwners';
const CLAIM_ONE_COMMAND = 'vmsClaimOwner';

// OWN-1 renewal of many claims of one instance (OWN-5), each checked against its owner (OWN-4): ours
// gets the TTL again, a vacant one is written back, another instance's is left and reported. ARGV[1] =
// owner, ARGV[2] = TTL (ms); returns {i, owner, …} for the keys another instance holds. One MGET and a
// PEXPIRE per key: ~11k redis-server instructions per key (7.0, callgrind), against ~14.6k for the
// SET per key of CLAIM_MANY and ~37k for a one-key EVAL. Sent by SHA: EVAL would send and hash the body
// every time. On a single server the EVALSHA is written straight from the device ids (encoded-script.redis.ts:
// ioredis's per-argument work was most of the platform's cost of a renewal); in a cluster, one key per
// script through ioredis (defineCommand), which routes it to the key's node.
// The loop reads locals, not the globals KEYS / ARGV / redis per key (a table lookup each).
const RENEW_MANY = `
local keys, me, ttl, call = KEYS, ARGV[1], ARGV[2], redis.call
local owners = call('MGET', unpack(keys))
local moved = {}
for i = 1, #keys do
  local owner = owners[i]
  if owner == me then
    call('PEXPIRE', keys[i], ttl)
  elseif not owner then
    call('SET', keys[i], me, 'PX', ttl)
  else
    moved[#moved + 1] = i
    moved[#moved + 1] = owner
  end
end
return moved`;
/** The script declared with one key: in a cluster, auto-pipelining groups commands by the key's slot. */
const RENEW_ONE_COMMAND = 'vmsRenewOwner';

/** The script commands defineCommand adds to the client: numkeys, keys…, then ARGV (one key: no numkeys). */
interface ScriptCommands {
  [RENEW_ONE_COMMAND](key: string, owner: string, ttlMs: number): Promise<unknown>;
  [CLAIM_COMMAND](numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  [CLAIM_ONE_COMMAND](key: string, owner: string, channel: string, ttlMs: number): Promise<unknown>;
}

/** The Redis key holding a device's owner. Exported for tests and operational tooling. */
export function ownershipKey(deviceId: string, prefix = 'vms:owner:'): string {
  return `${prefix}{${deviceId}}`;
}

/** The client stays the caller's: close() stops this store from using it, it does not quit it. */
export function createRedisOwnershipStore(client: RedisClient, opts: RedisOwnershipOptions = {}): OwnershipStore {
  const prefix = opts.keyPrefix ?? 'vms:owner:';
  const key = (deviceId: string): string => ownershipKey(deviceId, prefix);
  // OWN-4 notices go out on `<prefix>moved`: a store with its own key prefix (tests) hears only its own
  const channel = `${prefix}moved`;
  let closed = false;
  client.defineCommand(RENEW_ONE_COMMAND, { lua: RENEW_MANY, numberOfKeys: 1 });
  client.defineCommand(CLAIM_COMMAND, { lua: CLAIM_MANY });
  client.defineCommand(CLAIM_ONE_COMMAND, { lua: CLAIM_MANY, numberOfKeys: 1 });
  const scripts = client as unknown as ScriptCommands;
  const moves = createMoveWatch(client, channel, prefix);
  const renewEncoded = client.isCluster ? null : encodedScript(client as Redis, RENEW_MANY, prefix);
  /** The devices of `part` another instance holds, into `moved`. */
  const renewPart = async (part: readonly string[], instanceId: string, ttlMs: number, moved: Map<string, string>): Promise<void> => {
    const reply =
      renewEncoded === null
        ? await scripts[RENEW_ONE_COMMAND](key(part[0] as string), instanceId, ttlMs)
        : await renewEncoded.call(part, [instanceId, String(ttlMs)]);
    if (!Array.isArray(reply)) return;
    for (let j = 0; j + 1 < reply.length; j += 2) {
      const deviceId = part[Number(reply[j]) - 1];
      const owner: unknown = reply[j + 1];
      if (deviceId !== undefined && typeof owner === 'string') moved.set(deviceId, owner);
    }
  };

  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) throw new StoreClosedError('ownership store is closed');
    try {
      return await fn();
    } catch (err) {
      throw toOwnershipError(err, what);
    }
  };

  return {
    async claim(deviceId, instanceId, ttlMs) {
      assertTtl(ttlMs); // a caller bug, not a Redis condition: outside run()'s error mapping
      return run('claim', async () => {
        // OWN-1 / OWN-4: overwrite whoever held it, announcing a move; value and TTL in one script
        await scripts[CLAIM_ONE_COMMAND](key(deviceId), instanceId, channel, ttlMs);
      });
    },

    async claimIfVacant(deviceId, instanceId, ttlMs) {
      assertTtl(ttlMs);
      return run('claimIfVacant', async () => {
        const owner = await client.eval(CLAIM_IF_VACANT, 1, key(deviceId), instanceId, ttlMs);
        return typeof owner === 'string' ? owner : instanceId;
      });
    },

    async claimMany(claims: readonly OwnershipClaim[], instanceId) {
      for (const c of claims) assertTtl(c.ttlMs);
      return run('claimMany', async () => {
        const sends = client.isCluster
          ? claims.map((c) => scripts[CLAIM_ONE_COMMAND](key(c.deviceId), instanceId, channel, c.ttlMs))
          : chunks(claims).map((part) => scripts[CLAIM_COMMAND](part.length, ...part.map((c) => key(c.deviceId)), instanceId, channel, ...part.map((c) => c.ttlMs)));
        // settle every command before reporting, so a failure never leaves writes racing the caller
        const results = await Promise.allSettled(sends);
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed !== undefined) throw failed.reason;
      });
    },

    async renewMany(deviceIds, instanceId, ttlMs) {
      assertTtl(ttlMs);
      return run('renewMany', async () => {
        const moved = new Map<string, string>();
        // cluster: multi-key scripts must stay in one slot, so one key per script (auto-pipelined)
        const sends = (client.isCluster ? deviceIds.map((id) => [id]) : chunks(deviceIds)).map((part) => renewPart(part, instanceId, ttlMs, moved));
        const results = await Promise.allSettled(sends);
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed !== undefined) throw failed.reason;
        return moved;
      });
    },

    ownerOf: (deviceId) => run('ownerOf', () => client.get(key(deviceId))),

    ownersOf: (deviceIds) =>
      run('ownersOf', async () => {
        const owners = client.isCluster
          ? await Promise.all(deviceIds.map((id) => client.get(key(id))))
          : (await Promise.all(chunks(deviceIds).map((part) => client.mget(part.map(key))))).flat();
        const out = new Map<string, string>();
        deviceIds.forEach((id, i) => {
          const owner = owners[i];
          if (owner !== null && owner !== undefined) out.set(id, owner);
        });
        return out;
      }),

    releaseIfOwner: (deviceId, instanceId) =>
      run('releaseIfOwner', async () => {
        const deleted = await client.eval(RELEASE_IF_OWNER, 1, key(deviceId), instanceId);
        return deleted === 1;
      }),

    watchMoves(listener) {
      if (closed) throw new StoreClosedError('ownership store is closed');
      return moves.watch(listener);
    },

    async close() {
      closed = true;
      await moves.close();
    },
  } satisfies OwnershipStore;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}
