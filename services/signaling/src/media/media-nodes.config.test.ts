import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMediaNodes } from './media-nodes.config.ts';

describe('vms.media.nodes', () => {
  it('fills the documented defaults from a JSON array (env form)', () => {
    const r = parseMediaNodes(JSON.stringify([{ id: 'zlm-1', apiBaseUrl: 'http://10.0.0.5:8080/', secret: 's3', sdpIp: '10.0.0.5' }]));
    assert.ok(r.ok);
    assert.deepEqual(r.value, [
      {
        id: 'zlm-1',
        apiBaseUrl: 'http://10.0.0.5:8080',
        secret: 's3',
        sdpIp: '10.0.0.5',
        streamIp: '10.0.0.5',
        hookBaseUrl: '',
        rtpPortRange: { min: 30000, max: 30500 },
        httpPort: 8080,
        rtspPort: 554,
        rtmpPort: 1935,
        weight: 1,
        enabled: true,
      },
    ]);
  });

  it('takes a YAML list of maps whose scalars are strings', () => {
    const r = parseMediaNodes([{ id: 'a', apiBaseUrl: 'http://h', secret: 'x', sdpIp: '1.2.3.4', rtpPortRange: '40000-40100', weight: '3', enabled: 'false' }]);
    assert.ok(r.ok);
    assert.deepEqual([r.value[0]?.rtpPortRange, r.value[0]?.weight, r.value[0]?.enabled, r.value[0]?.httpPort], [{ min: 40000, max: 40100 }, 3, false, 80]);
  });

  it('reports every problem at once and never echoes the secret', () => {
    const r = parseMediaNodes(JSON.stringify([{ id: 'a', apiBaseUrl: 'ftp://x', secret: 'topsecret', sdpIp: '' }, { id: 'a', apiBaseUrl: 'http://h', secret: '', sdpIp: 'h', color: 1 }]));
    assert.ok(!r.ok);
    for (const part of ['[0]', 'apiBaseUrl', 'sdpIp', '[1].color: unknown key', 'duplicate', 'secret must not be empty']) assert.ok(r.problem.includes(part), `${part} in ${r.problem}`);
    assert.ok(!r.problem.includes('topsecret'));
    assert.deepEqual(parseMediaNodes('{not json'), { ok: false, problem: 'must be a JSON array of media nodes' });
    assert.deepEqual(parseMediaNodes('{}'), { ok: false, problem: 'must be a list of media nodes' });
  });
});

describe('vms.media.nodes through the config loader', () => {
  const io = (yaml: string) => ({ readFile: () => yaml, networkInterfaces: () => ({}) });
  it('reads a YAML list; env VMS_MEDIA_NODES wins; a bad value is a ConfigError naming the key', async () => {
    const { loadConfig } = await import('../config/load.ts');
    const yaml = 'vms:\n  media:\n    nodes:\n      - id: y1\n        apiBaseUrl: http://10.0.0.9:80\n        secret: s\n        sdpIp: 10.0.0.9\n';
    assert.equal(loadConfig(['--config', 'f.yaml'], {}, io(yaml)).media.nodes[0]?.id, 'y1');
    const env = { VMS_MEDIA_NODES: JSON.stringify([{ id: 'e1', apiBaseUrl: 'http://h', secret: 's', sdpIp: 'h' }]) };
    assert.equal(loadConfig(['--config', 'f.yaml'], env, io(yaml)).media.nodes[0]?.id, 'e1');
    assert.deepEqual(loadConfig([], {}, io('')).media.nodes, []);
    assert.throws(() => loadConfig([], { VMS_MEDIA_NODES: '[1]' }, io('')), /vms\.media\.nodes \(VMS_MEDIA_NODES\): \[0\] must be a map/);
  });
});
