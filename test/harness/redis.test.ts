import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis, waitFor, type RedisServer } from './index.ts';

function client(server: RedisServer): Redis {
  return new Redis(server.port, server.host, { maxRetriesPerRequest: 0, retryStrategy: () => 50, commandTimeout: 300 });
}

describe('startRedis', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it('answers PING with persistence off', async () => {
    assert.match(server.url, /^redis:\/\/127\.0\.0\.1:\d+$/);
    const c = client(server);
    try {
      assert.equal(await c.ping(), 'PONG');
      assert.deepEqual(await c.config('GET', 'save'), ['save', '']);
      assert.deepEqual(await c.config('GET', 'appendonly'), ['appendonly', 'no']);
    } finally {
      c.disconnect();
    }
  });

  it('kill() drops connections, restart() comes back on the same port', async () => {
    const port = server.port;
    const c = client(server);
    try {
      await c.set('k', 'v');
      await server.kill();
      assert.equal(server.isRunning(), false);
      await assert.rejects(c.ping());
      await server.restart();
      assert.equal(server.port, port);
      assert.equal(await waitFor(() => c.ping()), 'PONG');
      assert.equal(await c.get('k'), null, 'no persistence: data is gone');
    } finally {
      c.disconnect();
    }
  });

  it('restart() of a running server keeps the port', async () => {
    await server.restart();
    const c = client(server);
    try {
      assert.equal(await c.ping(), 'PONG');
    } finally {
      c.disconnect();
    }
  });

  it('pause() hangs commands until resume()', async () => {
    const c = client(server);
    try {
      await c.ping();
      server.pause();
      await server.paused();
      await assert.rejects(c.ping(), /timed out/i);
      server.resume();
      assert.equal(await waitFor(() => c.ping()), 'PONG');
    } finally {
      c.disconnect();
    }
  });

  it('stop() removes the directory and is idempotent', async () => {
    const other = await startRedis();
    assert.ok(existsSync(other.dir));
    await other.stop();
    await other.stop();
    assert.ok(!existsSync(other.dir));
    assert.equal(other.isRunning(), false);
  });
});
