// The edge's settings (config.ts): defaults, the edge→shard transport keys, every bad key named at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EdgeConfigError, loadEdgeConfig } from '../src/config.ts';

const base = { VMS_EDGE_FLOW_SECRET: 'x'.repeat(16), MYSQL_URL: 'mysql://u@h/db' };

describe('edge settings', () => {
  it('shards over UDP by default; TCP links with their bounds when asked', () => {
    const d = loadEdgeConfig(base);
    assert.equal(d.shardTransport, 'udp');
    assert.deepEqual(d.shardLinks, { connections: 2, maxQueued: 1000, backoffMaxMs: 5000 });
    const t = loadEdgeConfig({ ...base, VMS_EDGE_SHARD_TRANSPORT: 'TCP', VMS_EDGE_SHARD_TCP_CONNECTIONS: '4', VMS_EDGE_SHARD_TCP_MAX_QUEUED: '50', VMS_EDGE_SHARD_TCP_BACKOFF_MAX_MS: '2000' });
    assert.equal(t.shardTransport, 'tcp');
    assert.deepEqual(t.shardLinks, { connections: 4, maxQueued: 50, backoffMaxMs: 2000 });
  });

  it('a bad value names its key, every one at once', () => {
    assert.throws(
      () => loadEdgeConfig({ ...base, VMS_EDGE_SHARD_TRANSPORT: 'sctp', VMS_EDGE_SHARD_TCP_CONNECTIONS: '0', VMS_EDGE_SHARD_TCP_MAX_QUEUED: 'many', VMS_EDGE_SHARD_TCP_BACKOFF_MAX_MS: '10' }),
      (err: unknown) => {
        assert.ok(err instanceof EdgeConfigError);
        for (const key of ['VMS_EDGE_SHARD_TRANSPORT', 'VMS_EDGE_SHARD_TCP_CONNECTIONS', 'VMS_EDGE_SHARD_TCP_MAX_QUEUED', 'VMS_EDGE_SHARD_TCP_BACKOFF_MAX_MS']) assert.ok(err.issues.some((i) => i.startsWith(key)), key);
        return true;
      },
    );
  });
});
