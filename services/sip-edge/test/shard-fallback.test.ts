// A group whose shards all miss the online window is placed over its last eligible set (shard-fallback.ts):
// fleet-kill at 20,000–25,000 devices had every shard's heartbeat late and the edge refusing the whole fleet.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryNodeRegistry, FakeClock } from '@vms/cluster';
import { compilePlacementRules, placeDevice, type Shard } from '@vms/routing';
import { applyShardFallback } from '../src/shard-fallback.ts';
import { createPolledShardSource } from '../src/shard-source.ts';

const shard = (code: string, o: Partial<Shard> = {}): Shard => ({ code, sipHost: '127.0.0.1', sipPort: 5060, group: 'default', online: true, draining: false, ...o });
const none: ReadonlyMap<string, readonly Shard[]> = new Map();
const policy = compilePlacementRules([{ prefix: '44', group: 'south' }]);
const SOUTH = '44010000001320000001';
const DEFAULT = '34020000001320000001';

describe('placement over the last eligible set', () => {
  it('a group with an eligible shard is taken as read and remembered', () => {
    const read = [shard('a'), shard('b', { online: false })];
    const v = applyShardFallback(read, none);
    assert.equal(v.shards, read);
    assert.deepEqual(v.fallbackGroups, []);
    assert.deepEqual(v.lastEligible.get('default')?.map((s) => s.code), ['a']);
  });

  it('every shard of a group offline: the last eligible set is placed on, the other groups as read', () => {
    const first = applyShardFallback([shard('a'), shard('b'), shard('s1', { group: 'south' })], none);
    const late = [shard('a', { online: false }), shard('b', { online: false }), shard('s1', { group: 'south' })];
    const v = applyShardFallback(late, first.lastEligible);
    assert.deepEqual(v.fallbackGroups, ['default']);
    assert.deepEqual(v.shards.filter((s) => s.group === 'default' && s.online).map((s) => s.code).sort(), ['a', 'b']);
    assert.notEqual(placeDevice(policy, v.shards, DEFAULT), null);
    assert.equal(placeDevice(policy, v.shards, SOUTH)?.code, 's1');
    // before the fix: nowhere to place, 503
    assert.equal(placeDevice(policy, late, DEFAULT), null);
    // the same device lands where it was: no device moves while the table is late
    assert.equal(placeDevice(policy, v.shards, DEFAULT)?.code, placeDevice(policy, [shard('a'), shard('b')], DEFAULT)?.code);
  });

  it('the set kept is the last one with an eligible shard: a shard that died before the others stays out', () => {
    let v = applyShardFallback([shard('a'), shard('b')], none);
    v = applyShardFallback([shard('a'), shard('b', { online: false })], v.lastEligible);
    v = applyShardFallback([shard('a', { online: false }), shard('b', { online: false })], v.lastEligible);
    assert.deepEqual(v.shards.filter((s) => s.online).map((s) => s.code), ['a']);
    // still late on the next read: the same set, not forgotten
    v = applyShardFallback([shard('a', { online: false }), shard('b', { online: false })], v.lastEligible);
    assert.deepEqual(v.fallbackGroups, ['default']);
    assert.deepEqual(v.shards.filter((s) => s.online).map((s) => s.code), ['a']);
    // back: the read again
    const back = [shard('a', { online: false }), shard('b')];
    v = applyShardFallback(back, v.lastEligible);
    assert.equal(v.shards, back);
    assert.deepEqual(v.fallbackGroups, []);
  });

  it('a drain or a stop (draining) is never undone: a group drained on purpose places nowhere', () => {
    const first = applyShardFallback([shard('a'), shard('b')], none);
    const drained = [shard('a', { draining: true, drainedShare: 1 }), shard('b', { online: false, draining: true, drainedShare: 1 })];
    const v = applyShardFallback(drained, first.lastEligible);
    assert.deepEqual(v.fallbackGroups, []);
    assert.equal(placeDevice(policy, v.shards, DEFAULT), null);
    // one of the two drained, the other late: only the late one is placed on
    const mixed = applyShardFallback([shard('a', { draining: true, drainedShare: 1 }), shard('b', { online: false })], first.lastEligible);
    assert.equal(placeDevice(policy, mixed.shards, DEFAULT)?.code, 'b');
  });

  it('nothing ever eligible: nothing to fall back on (503 as before)', () => {
    const v = applyShardFallback([shard('a', { online: false })], none);
    assert.deepEqual(v.fallbackGroups, []);
    assert.equal(placeDevice(policy, v.shards, DEFAULT), null);
  });
});

describe('polled shard source: heartbeats late past the window', () => {
  it('keeps placing, warns on entering and leaving, counts the fallback; the listing stays as read', async () => {
    const clock = new FakeClock(1_000_000);
    const registry = createMemoryNodeRegistry({ clock });
    const info = (code: string) => ({ code, sipHost: '127.0.0.1', sipPort: 5070, internalBaseUrl: 'http://x', cascadeNode: false, startedAt: new Date(0), version: 't' });
    await registry.heartbeat(info('a'), 0);
    await registry.heartbeat(info('b'), 0);
    const warnings: { obj: object; msg: string }[] = [];
    const source = createPolledShardSource({ registry, onlineWindowMs: 15_000, pollMs: 60_000, log: { warn: (obj, msg) => warnings.push({ obj, msg }) } });
    try {
      await source.refresh();
      assert.equal(source.fallbackGroups(), 0);
      clock.advance(20_000); // both beats late past the 15 s window (event loops lagging)
      await source.refresh();
      assert.equal(source.listed().filter((s) => s.online).length, 0);
      assert.notEqual(placeDevice(policy, source.current(), DEFAULT), null);
      assert.equal(source.fallbackGroups(), 1);
      assert.equal(source.fallbacks(), 1);
      assert.equal(source.changes(), 0, 'no device moves');
      assert.equal(warnings.length, 1);
      assert.deepEqual(warnings[0]!.obj, { group: 'default', shards: 2 });
      await source.refresh(); // still late: no second warning
      assert.equal(warnings.length, 1);
      await registry.heartbeat(info('a'), 0);
      await source.refresh();
      assert.equal(source.fallbackGroups(), 0);
      assert.equal(source.fallbacks(), 1);
      assert.equal(warnings.length, 2);
      assert.deepEqual(warnings[1]!.obj, { group: 'default' });
      assert.equal(placeDevice(policy, source.current(), DEFAULT)?.code, 'a');
    } finally {
      source.close();
    }
  });
});
