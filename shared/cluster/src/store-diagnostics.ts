// Store round trips as diagnostics_channel events (STYLE 9): every Redis command and every MySQL
// statement through the pool publishes its outcome and duration; metrics subscribe (the signaling
// service's src/metrics). Nothing is measured while nobody subscribes: the wrappers then cost one
// property read per call.
import diagnosticsChannel from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'mysql2/promise';
import type { Cluster, Redis } from 'ioredis';

export const STORE_CHANNELS = Object.freeze({
  command: 'vms.store.command',
  connectionError: 'vms.store.connection_error',
});

export type StoreKind = 'redis' | 'mysql';

/** One Redis command or one MySQL statement, settled. */
export interface StoreCommandEvent {
  store: StoreKind;
  ok: boolean;
  seconds: number;
}

export interface StoreConnectionErrorEvent {
  store: StoreKind;
}

const command = diagnosticsChannel.channel(STORE_CHANNELS.command);
const connectionError = diagnosticsChannel.channel(STORE_CHANNELS.connectionError);

const settled = (store: StoreKind, promise: Promise<unknown>): void => {
  const started = performance.now();
  const done = (ok: boolean) => (): void => {
    if (command.hasSubscribers) command.publish({ store, ok, seconds: (performance.now() - started) / 1000 } satisfies StoreCommandEvent);
  };
  promise.then(done(true), done(false));
};

type SendCommand = (cmd: { promise?: Promise<unknown> } | undefined, ...rest: unknown[]) => unknown;

/** Every command goes through `sendCommand` (pipelines and auto-pipelining included, cluster or not). */
export function instrumentRedisClient(client: Redis | Cluster): void {
  const send = (client.sendCommand as unknown as SendCommand).bind(client);
  const wrapped: SendCommand = (cmd, ...rest) => {
    if (command.hasSubscribers && cmd?.promise !== undefined) settled('redis', cmd.promise);
    return send(cmd, ...rest);
  };
  (client as unknown as { sendCommand: SendCommand }).sendCommand = wrapped;
  client.on('error', () => {
    if (connectionError.hasSubscribers) connectionError.publish({ store: 'redis' } satisfies StoreConnectionErrorEvent);
  });
}

type PoolCall = (...args: unknown[]) => Promise<unknown>;

/** Statements through the pool (`execute`, `query`); those on a checked-out connection are not seen. */
export function instrumentMysqlPool(pool: Pool): Pool {
  // A Proxy, not patched methods: the pool it wraps may itself be a Proxy (mysql-pool.ts boundPool).
  const wrapped = new Map<string, PoolCall>();
  for (const name of ['execute', 'query'] as const) {
    const call = (pool as unknown as Record<string, PoolCall>)[name]!.bind(pool);
    wrapped.set(name, (...args) => {
      const p = call(...args);
      if (command.hasSubscribers) settled('mysql', p);
      return p;
    });
  }
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && wrapped.has(prop)) return wrapped.get(prop);
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}
