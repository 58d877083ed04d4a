import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeOwnershipMoves, MAX_MOVE_NOTICE_BYTES } from './ownership-moves.codec.ts';

describe('OWN-4 move notices (decodeOwnershipMoves)', () => {
  it('decodes the claim script\'s shape: new owner, then key / previous owner pairs', () => {
    // as Redis's cjson.encode writes it for two devices taken by node-b (one id with a brace)
    const message = '["node-b",["vms:owner:{34020000001320000001}","node-a","vms:owner:{a}b}","node-c"]]';
    assert.deepEqual(decodeOwnershipMoves(message, 'vms:owner:'), [
      { deviceId: '34020000001320000001', newOwner: 'node-b', previousOwner: 'node-a' },
      { deviceId: 'a}b', newOwner: 'node-b', previousOwner: 'node-c' },
    ]);
  });

  it('anything else yields nothing, never throws', () => {
    for (const message of [
      '',
      'not json',
      'null',
      '{}',
      '["node-b"]',
      '["", ["vms:owner:{d}", "node-a"]]',
      '["node-b", ["vms:owner:{d}"]]',
      '["node-b", "vms:owner:{d}"]',
      '[1, ["vms:owner:{d}", "node-a"]]',
      '["node-b", ["vms:owner:{d}", "node-a"], 3]',
      `["node-b", ["vms:owner:{d}", "${'x'.repeat(MAX_MOVE_NOTICE_BYTES)}"]]`,
    ]) {
      assert.deepEqual(decodeOwnershipMoves(message, 'vms:owner:'), [], message.slice(0, 60));
    }
  });

  it('skips pairs that are not keys of this prefix, keeps the others', () => {
    const message = '["node-b",["other:{d1}","node-a","vms:owner:{}","node-a","vms:owner:{d2}",7,"vms:owner:{d3}","node-a"]]';
    assert.deepEqual(decodeOwnershipMoves(message, 'vms:owner:'), [{ deviceId: 'd3', newOwner: 'node-b', previousOwner: 'node-a' }]);
  });
});
