// @vms/cluster's store events (vms.store.command, vms.store.connection_error) against a real
// redis-server: every command through the client is reported once with its outcome, pipelined ones
// included, and the client's reconnect attempts while Redis is down are reported as connection errors.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { createRedisClient, STORE_CHANNELS, waitForRedisReady, type StoreCommandEvent } from '@vms/cluster';
import { startRedis, waitFor } from '@vms/harness';

describe('store diagnostics (Redis)', () => {
  it('reports each command with its outcome and duration, and connection errors', async () => {
    const redis = await startRedis();
    const client = createRedisClient(redis.url);
    const commands: StoreCommandEvent[] = [];
    let connectionErrors = 0;
    const onCommand = (e: unknown): void => void commands.push(e as StoreCommandEvent);
    const onConnectionError = (): void => void connectionErrors++;
    try {
      await waitForRedisReady(client, 5000);
      subscribe(STORE_CHANNELS.command, onCommand);
      subscribe(STORE_CHANNELS.connectionError, onConnectionError);
      await client.set('k', 'v');
      assert.equal(await client.get('k'), 'v');
      await client.pipeline().set('a', '1').incr('a').exec();
      await assert.rejects(client.call('NO-SUCH-COMMAND'));
      await waitFor(() => commands.length >= 5, { timeoutMs: 2000, intervalMs: 10, description: 'five command events' });
      assert.equal(commands.length, 5);
      assert.deepEqual(commands.map((c) => [c.store, c.ok]), [['redis', true], ['redis', true], ['redis', true], ['redis', true], ['redis', false]]);
      for (const c of commands) assert.ok(c.seconds >= 0 && c.seconds < 5, String(c.seconds));
      await redis.stop();
      await waitFor(() => connectionErrors > 0, { timeoutMs: 5000, intervalMs: 20, description: 'a connection error while Redis is down' });
    } finally {
      unsubscribe(STORE_CHANNELS.command, onCommand);
      unsubscribe(STORE_CHANNELS.connectionError, onConnectionError);
      client.disconnect();
      await redis.stop();
    }
  });
});
