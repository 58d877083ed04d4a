/**
 * The receiving side of the OWN-4 move notices that ownership.redis.ts's claim script publishes: one
 * SUBSCRIBE on a dedicated connection (a subscribed connection can run nothing else), opened at the
 * first watcher. Works on a single server and on Redis Cluster (a PUBLISH reaches every node). At
 * most once: notices published while the connection is away are lost, and the previous owner's
 * ownership check notices those moves instead. ioredis reconnects and re-subscribes by itself.
 */
import type { Cluster, Redis } from 'ioredis';
import { decodeOwnershipMoves } from './ownership-moves.codec.ts';
import type { OwnershipMove } from './ownership.port.ts';
import { subscriberConnection, type RedisClient } from './redis-client.ts';

export interface MoveWatch {
  watch(listener: (move: OwnershipMove) => void): () => void;
  /** Quits the subscriber connection, if one was opened. Idempotent. */
  close(): Promise<void>;
}

export function createMoveWatch(client: RedisClient, channel: string, keyPrefix: string): MoveWatch {
  const watchers = new Set<(move: OwnershipMove) => void>();
  let sub: Redis | Cluster | null = null;
  let closed = false;

  const open = (): void => {
    if (sub !== null || closed) return;
    const connection = subscriberConnection(client, 'vms-owner-moves');
    connection.on('message', (ch: string, message: string) => {
      if (ch !== channel || closed) return;
      for (const move of decodeOwnershipMoves(message, keyPrefix)) for (const watcher of watchers) watcher(move);
    });
    // while it is down the notices are lost (at most once, see above); ioredis retries on its own
    connection.on('error', () => undefined);
    connection.subscribe(channel).catch(() => undefined); // queued until connected; fails only when closed first
    sub = connection;
  };

  return {
    watch(listener) {
      const watcher = (move: OwnershipMove): void => listener(move);
      watchers.add(watcher);
      open();
      return () => watchers.delete(watcher);
    },
    async close() {
      if (closed) return;
      closed = true;
      watchers.clear();
      const connection = sub;
      sub = null;
      if (connection !== null) await connection.quit().catch(() => connection.disconnect());
    },
  };
}
