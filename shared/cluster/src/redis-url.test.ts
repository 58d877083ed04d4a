import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InvalidStoreUrlError } from './errors.ts';
import { parseRedisUrl } from './redis-url.ts';

describe('parseRedisUrl (SPEC §12 REDIS_URL)', () => {
  it('reads a single server with defaults', () => {
    assert.deepEqual(parseRedisUrl('redis://10.0.0.5'), {
      mode: 'single',
      endpoint: { host: '10.0.0.5', port: 6379 },
      db: 0,
      tls: false,
    });
  });

  it('reads credentials, port, db and TLS', () => {
    assert.deepEqual(parseRedisUrl('rediss://user:p%40ss@redis.local:6380/2'), {
      mode: 'single',
      endpoint: { host: 'redis.local', port: 6380 },
      db: 2,
      tls: true,
      username: 'user',
      password: 'p@ss',
    });
    assert.deepEqual(parseRedisUrl('redis://:secret@h:1').password, 'secret');
    assert.equal(parseRedisUrl('redis://:secret@h:1').username, undefined);
  });

  it('reads a cluster seed list', () => {
    assert.deepEqual(parseRedisUrl('redis+cluster://h1:7000,h2:7001,[::1]:7002,h4'), {
      mode: 'cluster',
      nodes: [
        { host: 'h1', port: 7000 },
        { host: 'h2', port: 7001 },
        { host: '::1', port: 7002 },
        { host: 'h4', port: 6379 },
      ],
      tls: false,
    });
    assert.equal(parseRedisUrl('rediss+cluster://a:pw@h1:1').tls, true);
  });

  it('rejects what it cannot use, with a typed error', () => {
    for (const bad of ['', 'http://h', 'redis://', 'redis://h1:1,h2:2', 'redis://h:0', 'redis://h:99999', 'redis://h/x', 'redis+cluster://']) {
      assert.throws(() => parseRedisUrl(bad), (err: InvalidStoreUrlError) => err.code === 'CLUSTER_ERR_BAD_URL', bad);
    }
  });
});
