/**
 * SsrcAllocator on Redis, for several signaling instances sharing media nodes: an SSRC handed out by
 * one instance is never handed out by another while it is in use on that node.
 *
 * Per media node, three keys with one hash tag (one slot, so the scripts also run on Redis Cluster):
 *   <prefix>{<nodeId>}:used    sorted set: SSRC → expiry (ms, Redis server clock)
 *   <prefix>{<nodeId>}:owner   hash: SSRC → holder (the instance that allocated it)
 *   <prefix>{<nodeId>}:cursor  hash: first digit → last sequence handed out
 * Every verb is one Lua script (STYLE §4): allocate sweeps expired entries, then claims the first
 * free sequence after the cursor (never 0000); release deletes only if the caller still holds it.
 * Entries carry a TTL, renewed by the holder every `renewEveryMs` while its streams run: the SSRCs of
 * a crashed instance come free once the TTL passes. Expiry is judged by the Redis server's clock, so
 * instance clocks do not matter. Keys expire with their last entry.
 *
 * The client is structural (`eval` is all it needs): ioredis `Redis` and `Cluster` fit, and this
 * package does not depend on a Redis client. The client stays the caller's: close() does not quit it.
 */
import { MediaError } from './errors.ts';
import {
  assertSsrc,
  ssrcDomainPart,
  ssrcHistoryDigit,
  SSRC_SEQUENCE_MAX,
  type SsrcAllocator,
} from './ssrc-allocator.port.ts';

/** What the adapter needs of a Redis client: EVAL (ioredis `Redis` and `Cluster` have it). */
export interface RedisScriptClient {
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** Timers for renewal: the platform's Clock fits (setTimeout / clearTimeout). */
export interface SsrcRenewTimers {
  setTimeout(fn: () => void, ms: number): object;
  clearTimeout(handle: object): void;
}

export interface RedisSsrcAllocatorOptions {
  readonly client: RedisScriptClient;
  /** 20-digit server id (or realm): digits 4-8 go into every SSRC. */
  readonly serverId: string;
  /** This instance (node code): only the holder releases or renews an SSRC. */
  readonly holder: string;
  /** Default "vms:ssrc:". Tests use a unique prefix per case. */
  readonly keyPrefix?: string;
  /** Lifetime of an entry not renewed (a crashed holder's leak). Default 180 000 ms. */
  readonly ttlMs?: number;
  /** Renewal period of held entries. Default ttlMs / 3. */
  readonly renewEveryMs?: number;
  /** Default: the global timers, unref'd. */
  readonly timers?: SsrcRenewTimers;
  /** Held SSRCs another holder took over (an entry expired, e.g. Redis lost its data and refilled). */
  readonly onLost?: (nodeId: string, ssrcs: readonly string[]) => void;
  /** A renewal that failed (store unreachable); the next period tries again. */
  readonly onRenewError?: (err: MediaError) => void;
}

export const DEFAULT_SSRC_TTL_MS = 180_000;

// Shared by every script: KEYS[1] used (zset), KEYS[2] owner (hash), KEYS[3] cursor (hash).
const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function sweep(now)
  local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  for i = 1, #dead, 500 do
    redis.call('HDEL', KEYS[2], unpack(dead, i, math.min(i + 499, #dead)))
  end
  if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
end
local function touch(ttl)
  for i = 1, 3 do
    if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
`;

// ARGV: first digit, domain (5 digits), holder, ttl ms. Returns the SSRC, or nil when all are in use.
const ALLOCATE = `${PRELUDE}
local now = now_ms()
local ttl = tonumber(ARGV[4])
sweep(now)
local cursor = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '${SSRC_SEQUENCE_MAX}')
for i = 1, ${SSRC_SEQUENCE_MAX} do
  local seq = (cursor - 1 + i) % ${SSRC_SEQUENCE_MAX} + 1
  local ssrc = ARGV[1] .. ARGV[2] .. string.format('%04d', seq)
  if not redis.call('ZSCORE', KEYS[1], ssrc) then
    redis.call('ZADD', KEYS[1], now + ttl, ssrc)
    redis.call('HSET', KEYS[2], ssrc, ARGV[3])
    redis.call('HSET', KEYS[3], ARGV[1], seq)
    touch(ttl)
    return ssrc
  end
end
return false`;

// ARGV: ssrc, holder, ttl ms. 1 claimed, 0 already in use.
const RESERVE = `${PRELUDE}
local now = now_ms()
local ttl = tonumber(ARGV[3])
sweep(now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
touch(ttl)
return 1`;

// ARGV: ssrc, holder, ttl ms, previous holder. 1 when now the holder's (it was free, the previous holder's or
// already its own), 0 when a third holder has it.
const ADOPT = `${PRELUDE}
local now = now_ms()
local ttl = tonumber(ARGV[3])
sweep(now)
local o = redis.call('HGET', KEYS[2], ARGV[1])
if o and o ~= ARGV[2] and o ~= ARGV[4] then return 0 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
touch(ttl)
return 1`;

// ARGV: ssrc, holder. Deletes only if still held by the caller (compare-and-delete).
const RELEASE = `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1`;

// ARGV: holder, ttl ms, ssrc... Extends the caller's entries; re-claims its entries that vanished
// (Redis restarted empty) when nobody else took them. Returns the SSRCs now held by someone else.
const RENEW = `${PRELUDE}
local now = now_ms()
local ttl = tonumber(ARGV[2])
local lost = {}
for i = 3, #ARGV do
  local s = ARGV[i]
  local o = redis.call('HGET', KEYS[2], s)
  if o == ARGV[1] or (not o and not redis.call('ZSCORE', KEYS[1], s)) then
    redis.call('ZADD', KEYS[1], now + ttl, s)
    redis.call('HSET', KEYS[2], s, ARGV[1])
  else
    table.insert(lost, s)
  end
end
touch(ttl)
return lost`;

const IN_USE = `${PRELUDE}
sweep(now_ms())
return redis.call('ZCARD', KEYS[1])`;

/** Redis reply codes (first word of an error reply) that mean "not now", not "bad command". */
const UNAVAILABLE_REPLY_CODES = new Set(['CLUSTERDOWN', 'LOADING', 'MASTERDOWN', 'TRYAGAIN', 'READONLY', 'BUSY', 'MOVED', 'ASK']);

const RENEW_CHUNK = 500;

export function createRedisSsrcAllocator(opts: RedisSsrcAllocatorOptions): SsrcAllocator {
  const domain = ssrcDomainPart(opts.serverId);
  const prefix = opts.keyPrefix ?? 'vms:ssrc:';
  const ttlMs = opts.ttlMs ?? DEFAULT_SSRC_TTL_MS;
  if (!Number.isInteger(ttlMs) || ttlMs < 1000) throw new RangeError('ttlMs must be an integer of at least 1000 ms');
  const renewEveryMs = opts.renewEveryMs ?? Math.floor(ttlMs / 3);
  const timers: SsrcRenewTimers = opts.timers ?? {
    setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  };
  /** What this allocator holds, per node: renewed every period. */
  const held = new Map<string, Set<string>>();
  let timer: object | null = null;
  let closed = false;

  const keys = (nodeId: string): [string, string, string] => {
    const base = `${prefix}{${nodeId}}`;
    return [`${base}:used`, `${base}:owner`, `${base}:cursor`];
  };
  const run = async (what: string, nodeId: string, script: string, args: (string | number)[]): Promise<unknown> => {
    if (closed) throw new MediaError('MEDIA_ERR_CLOSED', 'SSRC allocator is closed');
    try {
      return await opts.client.eval(script, 3, ...keys(nodeId), ...args);
    } catch (err) {
      throw storeError(err, `SSRC ${what} on media node ${nodeId}`);
    }
  };
  const hold = (nodeId: string, ssrc: string): void => {
    let s = held.get(nodeId);
    if (s === undefined) held.set(nodeId, (s = new Set()));
    s.add(ssrc);
  };
  const unhold = (nodeId: string, ssrc: string): void => {
    const s = held.get(nodeId);
    s?.delete(ssrc);
    if (s?.size === 0) held.delete(nodeId);
  };

  const renewAll = async (): Promise<void> => {
    for (const [nodeId, set] of [...held]) {
      const list = [...set];
      for (let i = 0; i < list.length; i += RENEW_CHUNK) {
        try {
          const lost = await run('renew', nodeId, RENEW, [opts.holder, ttlMs, ...list.slice(i, i + RENEW_CHUNK)]);
          const gone = Array.isArray(lost) ? lost.filter((x): x is string => typeof x === 'string') : [];
          for (const s of gone) unhold(nodeId, s);
          if (gone.length > 0) opts.onLost?.(nodeId, gone);
        } catch (err) {
          if (closed) return;
          opts.onRenewError?.(err as MediaError);
        }
      }
    }
  };
  const schedule = (): void => {
    if (closed) return;
    timer = timers.setTimeout(() => {
      timer = null;
      void renewAll().finally(schedule);
    }, renewEveryMs);
  };
  schedule();

  return {
    async allocate(nodeId, purpose) {
      const ssrc = await run('allocate', nodeId, ALLOCATE, [ssrcHistoryDigit(purpose), domain, opts.holder, ttlMs]);
      if (typeof ssrc !== 'string') {
        throw new MediaError('MEDIA_ERR_SSRC_EXHAUSTED', `all ${SSRC_SEQUENCE_MAX} ${purpose} SSRCs of media node ${nodeId} are in use`);
      }
      hold(nodeId, ssrc);
      return ssrc;
    },
    async reserve(nodeId, ssrc) {
      assertSsrc(ssrc);
      const claimed = (await run('reserve', nodeId, RESERVE, [ssrc, opts.holder, ttlMs])) === 1;
      if (claimed) hold(nodeId, ssrc);
      return claimed;
    },
    async adopt(nodeId, ssrc, fromHolder) {
      assertSsrc(ssrc);
      const taken = (await run('adopt', nodeId, ADOPT, [ssrc, opts.holder, ttlMs, fromHolder])) === 1;
      if (taken) hold(nodeId, ssrc);
      return taken;
    },
    async release(nodeId, ssrc) {
      unhold(nodeId, ssrc); // whatever Redis says, this instance no longer renews it
      return (await run('release', nodeId, RELEASE, [ssrc, opts.holder])) === 1;
    },
    async inUse(nodeId) {
      const n = await run('count', nodeId, IN_USE, []);
      return typeof n === 'number' ? n : 0;
    },
    async close() {
      closed = true;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
    },
  } satisfies SsrcAllocator;
}

function storeError(err: unknown, what: string): MediaError {
  if (err instanceof MediaError) return err;
  // ioredis names server error replies ReplyError; their first word is the Redis error code
  if (err instanceof Error && err.name === 'ReplyError') {
    const code = err.message.split(' ', 1)[0] ?? '';
    if (!UNAVAILABLE_REPLY_CODES.has(code)) return new MediaError('MEDIA_ERR_STORE_QUERY', `${what}: Redis rejected the script (${code})`, { cause: err });
  }
  return new MediaError('MEDIA_ERR_STORE_UNAVAILABLE', `${what}: Redis unavailable`, { cause: err });
}
