// Paced drain through the node directory (issue 14): without a period the drain is paced by the node's own
// online-device count at vms.placement.drain-rate; an explicit period wins; the listing shows the progress.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryNodeRegistry, MAX_DRAIN_PERIOD_MS, type NodeInfo } from '@vms/cluster';
import { FakeClock } from '../core/clock.ts';
import { createClusterNodeDirectory, defaultDrainPeriodMs, MIN_DRAIN_PERIOD_MS } from './node-directory.cluster.ts';
import { NodeTracker } from './node-tracker.ts';

const info = (code: string): NodeInfo => ({ code, sipHost: '127.0.0.1', sipPort: 5060, internalBaseUrl: `http://${code}:18080`, cascadeNode: false, startedAt: new Date(0), version: 't' });

function setup() {
  const clock = new FakeClock(1_000_000);
  const registry = createMemoryNodeRegistry({ clock });
  const tracker = new NodeTracker({ registry, selfCode: 'node-a', onlineWindowMs: 60_000, clock, onLeaderChange: () => undefined });
  return { clock, registry, directory: createClusterNodeDirectory(tracker, registry, { drainRate: 100 }) };
}

const shareOf = async (d: ReturnType<typeof setup>['directory'], code: string): Promise<number | undefined> => (await d.listNodes()).nodes.find((n) => n.nodeCode === code)?.drainedShare;

describe('paced drain (node directory)', () => {
  it('default period: online devices / rate, at least 1 s, at most the table’s longest', () => {
    assert.equal(defaultDrainPeriodMs(495, 100), 4950);
    assert.equal(defaultDrainPeriodMs(0, 100), MIN_DRAIN_PERIOD_MS);
    assert.equal(defaultDrainPeriodMs(1e12, 1), MAX_DRAIN_PERIOD_MS);
  });

  it('without a period, a node with 1,000 online devices at 100/s drains over 10 s; the listing shows the share', async () => {
    const { clock, registry, directory } = setup();
    await registry.heartbeat(info('node-a'), 10);
    await registry.heartbeat(info('node-b'), 1000);
    assert.equal(await directory.setDraining('node-b', true), 10_000);
    assert.equal(await shareOf(directory, 'node-b'), 0);
    clock.advance(5000);
    assert.equal(await shareOf(directory, 'node-b'), 0.5);
    clock.advance(5000);
    assert.equal(await shareOf(directory, 'node-b'), 1);
    assert.equal(await shareOf(directory, 'node-a'), 0, 'the others are not draining');
  });

  it('an explicit period wins (0 = all at once); an unknown node is refused', async () => {
    const { clock, registry, directory } = setup();
    await registry.heartbeat(info('node-b'), 1000);
    assert.equal(await directory.setDraining('node-b', true, 2000), 2000);
    clock.advance(1000);
    assert.equal(await shareOf(directory, 'node-b'), 0.5);
    assert.equal(await directory.setDraining('node-b', false, 0), 0);
    assert.equal(await directory.setDraining('node-b', true, 0), 0);
    assert.equal(await shareOf(directory, 'node-b'), 1);
    assert.equal(await directory.setDraining('no-such-node', true), null);
  });

  it('undrain without a period: its share of the group’s online devices at the rate; the return shows its progress', async () => {
    const { clock, registry, directory } = setup();
    await registry.heartbeat(info('node-a'), 1500);
    await registry.heartbeat(info('node-b'), 900); // moved away, still online in its own count until its offline scan
    await registry.heartbeat(info('node-c'), 1500);
    assert.equal(await directory.setDraining('node-b', true, 0), 0);
    // the others' 3,000 devices over three serving shards once node-b is back: 1,000 to take back at 100/s
    assert.equal(await directory.setDraining('node-b', false), 10_000);
    const joined = async (): Promise<number | undefined> => (await directory.listNodes()).nodes.find((n) => n.nodeCode === 'node-b')?.joinedShare;
    assert.equal(await joined(), 0);
    clock.advance(2500);
    assert.equal(await joined(), 0.25);
    clock.advance(7500);
    assert.equal(await joined(), 1);
    assert.equal((await directory.listNodes()).nodes.find((n) => n.nodeCode === 'node-a')?.joinedShare, 1, 'the others are not returning');
  });
});
