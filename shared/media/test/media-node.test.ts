// Media node validation and the memory registry's own specifics (the shared behaviour is the
// contract in test/integration/media-node-registry.contract.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryMediaNodeRegistry, validateMediaNode, type MediaError, type MediaNode } from '../src/index.ts';

const good: MediaNode = {
  id: 'zlm-a',
  apiBaseUrl: 'http://10.0.0.21:80',
  secret: 's3cret',
  rtpPortRange: { min: 30000, max: 30500 },
  sdpIp: '10.0.0.21',
  streamIp: 'media.example.com',
  hookBaseUrl: 'http://10.0.0.11:8080/vms/webhook',
  enabled: true,
  weight: 1,
  httpPort: 80,
  rtspPort: 554,
  rtmpPort: 1935,
};

describe('validateMediaNode', () => {
  it('accepts a complete node, and an empty hook base', () => {
    assert.equal(validateMediaNode(good), good);
    validateMediaNode({ ...good, hookBaseUrl: '' });
  });

  it('reports every problem at once', () => {
    const bad = { ...good, id: '', apiBaseUrl: '10.0.0.21:80', secret: '', rtpPortRange: { min: 40000, max: 30000 }, httpPort: 0, weight: -1 };
    assert.throws(
      () => validateMediaNode(bad),
      (e: MediaError) =>
        e.code === 'MEDIA_ERR_INVALID_NODE' &&
        ['id', 'apiBaseUrl', 'secret', 'rtpPortRange', 'httpPort', 'weight'].every((k) => e.message.includes(k)),
    );
  });
});

describe('memory registry', () => {
  it('hands out frozen copies: callers cannot change stored nodes', async () => {
    const mutable = { ...good, rtpPortRange: { ...good.rtpPortRange } };
    const r = createMemoryMediaNodeRegistry([mutable]);
    mutable.rtpPortRange.max = 1;
    const got = await r.get('zlm-a');
    assert.equal(got?.rtpPortRange.max, 30500);
    assert.ok(Object.isFrozen(got) && Object.isFrozen(got?.rtpPortRange));
  });
});
