/**
 * CascadeEventBus on Redis pub/sub (SPEC CASC-3, CASC-4): PUBLISH on the caller's client, SUBSCRIBE
 * on a dedicated connection this bus owns (a subscribed connection can run nothing else). Works the
 * same on a single server and on Redis Cluster, where a plain PUBLISH is forwarded to every node, so a
 * subscriber on any node receives it.
 *
 * At most once (CASC-4): the caller's client is built by createRedisClient without an offline queue,
 * so while Redis is unreachable PUBLISH fails at once and the event is dropped and reported — never
 * queued to burst out later, never thrown. The subscriber reconnects and re-subscribes by itself;
 * events published while it was away are lost, which the cascade tolerates (a later event or the
 * upstream's periodic catalog query heals it, reference §6.4).
 */
import type { Cluster, Redis } from 'ioredis';
import { StoreClosedError } from '../errors.ts';
import { subscriberConnection, type RedisClient } from '../redis-client.ts';
import { toOwnershipError } from '../redis-errors.ts';
import { CascadeBusCore } from './cascade-bus.core.ts';
import type { CascadeBusOptions, CascadeEventBus } from './cascade-bus.port.ts';
import { CASCADE_CHANNEL } from './cascade-event.ts';

export interface RedisCascadeBusOptions extends CascadeBusOptions {
  /** Default `vms:cascade:events`; tests use a unique channel. */
  readonly channel?: string;
}

export interface RedisCascadeEventBus extends CascadeEventBus {
  /** True once SUBSCRIBE was confirmed. Resolves false if that takes longer than `timeoutMs`. */
  waitUntilSubscribed(timeoutMs?: number): Promise<boolean>;
}

/** The publisher client stays the caller's: close() quits only the subscriber connection. */
export function createRedisCascadeBus(client: RedisClient, opts: RedisCascadeBusOptions): RedisCascadeEventBus {
  const channel = opts.channel ?? CASCADE_CHANNEL;
  const core = new CascadeBusCore(opts);
  const sub = subscriberFor(client, opts.instanceId);
  let closed = false;
  let down = false;

  sub.on('message', (ch: string, message: string) => {
    if (ch === channel && !closed) core.deliver(message);
  });
  sub.on('error', (error: unknown) => {
    if (down || closed) return; // one report per outage; ioredis repeats the error on every retry
    down = true;
    core.report({ kind: 'subscriber-down', error });
  });
  sub.on('ready', () => {
    down = false;
  });

  // Queued until the connection is up, then re-sent by ioredis after every reconnect (autoResubscribe).
  const subscribed: Promise<boolean> = sub.subscribe(channel).then(
    () => true,
    () => false, // closed before it connected
  );

  return {
    async publish(data) {
      const event = core.envelope(data);
      if (closed) return core.dropped(event, new StoreClosedError('cascade bus is closed'));
      const text = core.encode(event, () => new RangeError('cascade event too large'));
      if (text === null) return;
      try {
        await client.publish(channel, text);
        core.sent();
      } catch (err) {
        core.dropped(event, toOwnershipError(err, 'cascade publish')); // CASC-4: logged by the caller's callback, dropped
      }
    },
    subscribe: (handler) => core.subscribe(handler),
    stats: () => core.stats(),
    waitUntilSubscribed(timeoutMs = 5000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      return Promise.race([subscribed, timeout]).finally(() => clearTimeout(timer));
    },
    async close() {
      if (closed) return;
      closed = true;
      core.clearHandlers();
      sub.disconnect(); // not QUIT: it must not wait for a server that may be gone
    },
  } satisfies RedisCascadeEventBus;
}

function subscriberFor(client: RedisClient, instanceId: string): Redis | Cluster {
  return subscriberConnection(client, `vms-cascade-sub:${instanceId}`.replace(/\s/g, '_'));
}
