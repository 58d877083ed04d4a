import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { electCascadeLeader } from './election.ts';

const n = (code: string, online: boolean, cascadeNode: boolean) => ({ code, online, cascadeNode });

describe('electCascadeLeader (SPEC CASC-1)', () => {
  it('picks the smallest code among online flagged nodes', () => {
    const nodes = [n('signal-node-c', true, true), n('signal-node-b', true, true), n('signal-node-a', true, false)];
    assert.equal(electCascadeLeader(nodes, 'signal-node-a'), 'signal-node-b');
  });

  it('ignores flagged nodes that are offline (FAIL-2: next smallest flagged takes over)', () => {
    const nodes = [n('a', false, true), n('b', true, true), n('c', true, true)];
    assert.equal(electCascadeLeader(nodes, 'c'), 'b');
  });

  it('falls back to the smallest online node when no flagged node is online', () => {
    const nodes = [n('a', false, true), n('node-9', true, false), n('node-10', true, false)];
    // ordinal order: "node-10" < "node-9"
    assert.equal(electCascadeLeader(nodes, 'node-9'), 'node-10');
  });

  it('falls back to self when nothing is online (single instance, empty table)', () => {
    assert.equal(electCascadeLeader([], 'self'), 'self');
    assert.equal(electCascadeLeader([n('a', false, true)], 'self'), 'self');
  });

  it('is case-sensitive and locale-independent', () => {
    const nodes = [n('b', true, true), n('B', true, true), n('a', true, true)];
    assert.equal(electCascadeLeader(nodes, 'a'), 'B'); // 'B' (0x42) < 'a' (0x61)
  });

  it('gives every instance the same answer whatever the input order', () => {
    const nodes = [n('x', true, true), n('m', true, false), n('k', true, true), n('z', false, true)];
    const answers = new Set([0, 1, 2, 3].map((shift) => electCascadeLeader([...nodes.slice(shift), ...nodes.slice(0, shift)], 'x')));
    assert.deepEqual([...answers], ['k']);
  });

  it('self is only the last resort, even when self is flagged but not in the table yet', () => {
    assert.equal(electCascadeLeader([n('b', true, false)], 'a'), 'b');
  });
});
