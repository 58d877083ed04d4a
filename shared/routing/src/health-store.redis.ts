/**
 * HealthStore shared by every instance through Redis: one hash (`vms:routing:health`, field = destination
 * id, value = the DestinationHealth as JSON). `apply` reads the record, runs the pure state machine here,
 * and writes the result with a compare-and-set Lua script (one atomic command, STYLE §4): when another
 * instance changed the record in between, the script refuses and the step is redone on the fresh record
 * (at most APPLY_ATTEMPTS times). A write that changes the state publishes the destination id on
 * ROUTING_HEALTH_CHANNEL, so every instance re-reads at once instead of at its next refresh.
 *
 * Records from Redis are hostile until checked (another process could write anything there): a record
 * that does not parse as a health counts as absent (active), never as a crash.
 */
import { initialHealth, stepHealth, type DestinationHealth } from './health.ts';
import type { HealthStore } from './health-store.port.ts';
import { RoutingError } from './errors.ts';

export const ROUTING_HEALTH_KEY = 'vms:routing:health';
export const ROUTING_HEALTH_CHANNEL = 'vms:routing:health:changed';
const APPLY_ATTEMPTS = 8;
/** Longest record read (a health is ~150 bytes of JSON). */
const MAX_RECORD = 1024;

/** KEYS[1] hash, KEYS[2] channel; ARGV[1] field, ARGV[2] expected ('' = absent), ARGV[3] new, ARGV[4] '1' to publish. */
const COMPARE_AND_SET = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (cur or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '1' then redis.call('PUBLISH', KEYS[2], ARGV[1]) end
return 1`;

/** The few ioredis commands used (a test can pass any client with these). */
export interface HealthRedis {
  hget(key: string, field: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, ...fields: string[]): Promise<number>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

const STATES = new Set(['active', 'probing', 'inactive']);
const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n < 1e9;

/** A stored record, or undefined when it is not a health. */
export function parseHealth(text: string | null | undefined): DestinationHealth | undefined {
  if (text === null || text === undefined || text.length > MAX_RECORD) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  const h = v as Record<string, unknown>;
  if (typeof h.auto !== 'string' || !STATES.has(h.auto)) return undefined;
  if (h.manual !== undefined && h.manual !== 'disabled' && h.manual !== 'enabled') return undefined;
  if (!isCount(h.probeFailures) || !isCount(h.probeSuccesses) || !isCount(h.businessFailures)) return undefined;
  if (typeof h.since !== 'number' || !Number.isFinite(h.since)) return undefined;
  return {
    auto: h.auto as DestinationHealth['auto'],
    manual: h.manual as DestinationHealth['manual'],
    probeFailures: h.probeFailures,
    probeSuccesses: h.probeSuccesses,
    businessFailures: h.businessFailures,
    since: h.since,
  };
}

export function createRedisHealthStore(redis: HealthRedis): HealthStore {
  return {
    async apply(id, event, now, policy) {
      for (let attempt = 0; attempt < APPLY_ATTEMPTS; attempt++) {
        const text = await redis.hget(ROUTING_HEALTH_KEY, id);
        const current = parseHealth(text);
        const before = current ?? initialHealth(now);
        const next = stepHealth(before, event, now, policy);
        if (current !== undefined && next === before) return before; // nothing to write
        const changed = next.auto !== before.auto || next.manual !== before.manual;
        const ok = await redis.eval(COMPARE_AND_SET, 2, ROUTING_HEALTH_KEY, ROUTING_HEALTH_CHANNEL, id, text ?? '', JSON.stringify(next), changed ? '1' : '0');
        if (ok === 1) return next;
      }
      throw new RoutingError('ROUTING_ERR_STORE_UNAVAILABLE', `routing health of ${id}: ${APPLY_ATTEMPTS} concurrent updates in a row`);
    },
    async all() {
      const raw = await redis.hgetall(ROUTING_HEALTH_KEY);
      const out = new Map<string, DestinationHealth>();
      for (const [id, text] of Object.entries(raw)) {
        const h = parseHealth(text);
        if (h !== undefined) out.set(id, h);
      }
      return out;
    },
    async forget(ids) {
      if (ids.length > 0) await redis.hdel(ROUTING_HEALTH_KEY, ...ids);
    },
  } satisfies HealthStore;
}

/** A subscriber connection (ioredis in subscriber mode). */
export interface HealthSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

/**
 * Calls `onChange` when any instance changed a destination's state (the message is only a hint: the
 * receiver re-reads the hash). Returns the unsubscribe.
 */
export async function subscribeHealthChanges(sub: HealthSubscriber, onChange: () => void): Promise<() => Promise<void>> {
  const listener = (ch: string): void => {
    if (ch === ROUTING_HEALTH_CHANNEL) onChange();
  };
  sub.on('message', listener);
  await sub.subscribe(ROUTING_HEALTH_CHANNEL);
  return async () => {
    sub.off('message', listener);
    await sub.unsubscribe(ROUTING_HEALTH_CHANNEL);
  };
}
