// The edge's settings (config.ts): defaults, the edge→shard transport keys, the overload marks, every bad key named at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SHED_POLICY } from '@vms/sip';
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

  it('the overload marks: the shards\' defaults, each settable, a crossed band or an out-of-range value named', () => {
    assert.deepEqual(loadEdgeConfig(base).shedPolicy, DEFAULT_SHED_POLICY);
    assert.equal(loadEdgeConfig(base).maxFlowDevices, 100_000);
    assert.equal(loadEdgeConfig({ ...base, VMS_EDGE_MAX_FLOW_DEVICES: '400000' }).maxFlowDevices, 400_000);
    const set = loadEdgeConfig({
      ...base,
      VMS_EDGE_SHED_QUEUE_HIGH: '1048576',
      VMS_EDGE_SHED_QUEUE_LOW: '262144',
      VMS_EDGE_SHED_UTILIZATION_HIGH: '95',
      VMS_EDGE_SHED_UTILIZATION_LOW: '80',
      VMS_EDGE_SHED_MAX_SHARE: '90',
      VMS_EDGE_SHED_RECEIVE_BUFFER: '786432',
      VMS_EDGE_SHED_RETRY_AFTER: '10',
      VMS_EDGE_SHED_RETRY_AFTER_SPREAD: '30',
      VMS_EDGE_SHED_RETRY_AFTER_MAX_SPREAD: '300',
    }).shedPolicy;
    assert.deepEqual(set, {
      ...DEFAULT_SHED_POLICY,
      highQueueBytes: 1048576,
      lowQueueBytes: 262144,
      highUtilization: 0.95,
      lowUtilization: 0.8,
      maxFraction: 0.9,
      sheddingReceiveBufferBytes: 786432,
      retryAfterMinSec: 10,
      retryAfterSpreadSec: 30,
      retryAfterMaxSpreadSec: 300,
    });
    assert.throws(
      () => loadEdgeConfig({ ...base, VMS_EDGE_SHED_QUEUE_LOW: '2000000', VMS_EDGE_SHED_UTILIZATION_LOW: '95', VMS_EDGE_SHED_MAX_SHARE: '100', VMS_EDGE_SHED_RETRY_AFTER_MAX_SPREAD: '10', VMS_EDGE_SHED_RECEIVE_BUFFER: '524288' }),
      (err: unknown) => {
        assert.ok(err instanceof EdgeConfigError);
        for (const key of ['VMS_EDGE_SHED_QUEUE_LOW', 'VMS_EDGE_SHED_UTILIZATION_LOW', 'VMS_EDGE_SHED_MAX_SHARE', 'VMS_EDGE_SHED_RETRY_AFTER_MAX_SPREAD', 'VMS_EDGE_SHED_RECEIVE_BUFFER']) assert.ok(err.issues.some((i) => i.startsWith(key)), key);
        return true;
      },
    );
  });
});
