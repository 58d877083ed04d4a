/**
 * Behaviour every NodeRegistry must have (SPEC NODE-1/2), run by cluster-node-registry.test.ts
 * against the memory registry and a real MariaDB. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { StoreClosedError, electCascadeLeader, type NodeInfo, type NodeRegistry } from '@vms/cluster';

export interface NodeRegistryFixture {
  registry: NodeRegistry;
  /** Lets time pass on the registry's clock (fake clock jump, or real waiting for a database). */
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

export const nodeInfo = (code: string, over: Partial<NodeInfo> = {}): NodeInfo => ({
  code,
  sipHost: '10.0.0.11',
  sipPort: 5060,
  internalBaseUrl: 'http://10.0.0.11:80',
  cascadeNode: false,
  startedAt: new Date('2025-03-01T08:00:00.123Z'),
  version: '0.1.0',
  ...over,
});

export function nodeRegistryContract(label: string, make: () => Promise<NodeRegistryFixture>): void {
  describe(`NodeRegistry contract: ${label}`, () => {
    let fx: NodeRegistryFixture;
    let registry: NodeRegistry;
    beforeEach(async () => {
      fx = await make();
      registry = fx.registry;
    });
    afterEach(async () => {
      await fx.close();
    });

    it('starts empty', async () => {
      assert.deepEqual(await registry.listNodes(10_000), []);
      assert.equal(await registry.getNode('signal-node-a', 10_000), null);
    });

    it('a heartbeat stores every field and the node is online (NODE-1, NODE-2)', async () => {
      const self = nodeInfo('signal-node-a', { cascadeNode: true, sipPort: 5062, version: '1.2.3' });
      await registry.heartbeat(self, 42);
      const row = await registry.getNode('signal-node-a', 10_000);
      assert.ok(row !== null);
      assert.deepEqual(
        { ...row, lastHeartbeat: undefined, offlineInMs: undefined },
        { ...self, lastHeartbeat: undefined, offlineInMs: undefined, onlineDeviceCount: 42, online: true, draining: false, drainedShare: 0, joinedShare: 1, joinFrom: 1, placementGroup: 'default' },
      );
      assert.ok(row.startedAt instanceof Date && row.lastHeartbeat instanceof Date);
    });

    it('heartbeats upsert one row per code and move last_heartbeat forward', async () => {
      await registry.heartbeat(nodeInfo('signal-node-a'), 1);
      const first = await registry.getNode('signal-node-a', 10_000);
      await fx.advance(20);
      const restarted = new Date('2025-03-02T00:00:00.000Z');
      await registry.heartbeat(nodeInfo('signal-node-a', { internalBaseUrl: 'http://10.0.0.99:80', startedAt: restarted }), 7);
      const rows = await registry.listNodes(10_000);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.internalBaseUrl, 'http://10.0.0.99:80');
      assert.equal(rows[0]?.onlineDeviceCount, 7);
      assert.equal(rows[0]?.startedAt.getTime(), restarted.getTime());
      assert.ok((rows[0]?.lastHeartbeat.getTime() ?? 0) > (first?.lastHeartbeat.getTime() ?? Infinity));
    });

    it('online means "heartbeat within the window" on the registry clock', async () => {
      await registry.heartbeat(nodeInfo('old'), 0);
      await fx.advance(400);
      await registry.heartbeat(nodeInfo('fresh'), 0);
      const narrow = await registry.listNodes(200);
      assert.deepEqual(
        narrow.map((r) => [r.code, r.online]),
        [
          ['fresh', true],
          ['old', false],
        ],
      );
      assert.equal((await registry.getNode('old', 60_000))?.online, true);
    });

    it('offlineInMs: how long an online row has left in the window, on the registry clock; 0 when offline', async () => {
      await registry.heartbeat(nodeInfo('old'), 0);
      await fx.advance(300);
      const [row] = await registry.listNodes(1000);
      assert.ok(row !== undefined && row.online);
      // 1000 ms window, ≥ 300 ms since the beat (more on a real database: the wait and the query take time)
      assert.ok(row.offlineInMs > 0 && row.offlineInMs <= 700, String(row.offlineInMs));
      assert.equal((await registry.getNode('old', 200))?.offlineInMs, 0);
      await registry.leave('old');
      assert.equal((await registry.getNode('old', 60_000))?.offlineInMs, 0, 'a node that left is offline now');
    });

    it('leave: offline at once and still listed with its last heartbeat; the next heartbeat brings it back', async () => {
      await registry.heartbeat(nodeInfo('signal-node-a', { cascadeNode: true }), 3);
      await registry.heartbeat(nodeInfo('signal-node-b', { cascadeNode: true }), 0);
      const before = await registry.getNode('signal-node-a', 60_000);
      await registry.leave('signal-node-a');
      await registry.leave('no-such-node'); // ignored
      const left = await registry.listNodes(60_000);
      assert.deepEqual(left.map((r) => [r.code, r.online]), [['signal-node-a', false], ['signal-node-b', true]]);
      assert.equal(left[0]?.lastHeartbeat.getTime(), before?.lastHeartbeat.getTime(), 'last heartbeat kept for the listing');
      assert.equal(electCascadeLeader(left, 'signal-node-b'), 'signal-node-b', 'the leader moves at once');
      await fx.advance(20);
      await registry.heartbeat(nodeInfo('signal-node-a', { cascadeNode: true }), 0); // restarted
      assert.equal((await registry.getNode('signal-node-a', 60_000))?.online, true);
    });

    it('draining (issue 14): set and cleared by the operator, kept across heartbeats; a leaving node reads draining until it beats again', async () => {
      await registry.heartbeat(nodeInfo('signal-node-a', { placementGroup: 'east' }), 0);
      await registry.heartbeat(nodeInfo('signal-node-b'), 0);
      assert.equal(await registry.setDraining('signal-node-a', true), true);
      assert.equal(await registry.setDraining('no-such-node', true), false);
      await registry.heartbeat(nodeInfo('signal-node-a', { placementGroup: 'east' }), 0);
      const rows = await registry.listNodes(60_000);
      assert.deepEqual(rows.map((r) => [r.code, r.online, r.draining, r.placementGroup]), [
        ['signal-node-a', true, true, 'east'],
        ['signal-node-b', true, false, 'default'],
      ]);
      await registry.setDraining('signal-node-a', false);
      assert.equal((await registry.getNode('signal-node-a', 60_000))?.draining, false);
      await registry.leave('signal-node-b');
      assert.equal((await registry.getNode('signal-node-b', 60_000))?.draining, true, 'a stop in progress drains');
      await fx.advance(20);
      await registry.heartbeat(nodeInfo('signal-node-b'), 0);
      assert.equal((await registry.getNode('signal-node-b', 60_000))?.draining, false, 'the restarted process takes devices again');
    });

    it('paced drain (issue 14): progress from the drain’s start over its period, kept when asked again, 1 without a period or when stopping, 0 undrained', async () => {
      await registry.heartbeat(nodeInfo('signal-node-a'), 0);
      await registry.heartbeat(nodeInfo('signal-node-b'), 0);
      const share = async (code: string): Promise<number | undefined> => (await registry.getNode(code, 60_000))?.drainedShare;
      assert.equal(await share('signal-node-a'), 0, 'not draining');
      assert.equal(await registry.setDraining('signal-node-a', true, 2000), true);
      const first = (await share('signal-node-a'))!;
      assert.ok(first >= 0 && first < 0.5, `just started: ${first}`);
      await fx.advance(1000);
      assert.equal(await registry.setDraining('signal-node-a', true, 2000), true, 'asked again');
      const mid = (await share('signal-node-a'))!;
      assert.ok(mid >= 0.5 && mid <= 1, `the drain kept its start: ${mid}`);
      await fx.advance(1100);
      assert.equal(await share('signal-node-a'), 1, 'done after the period');
      await registry.heartbeat(nodeInfo('signal-node-a'), 0);
      assert.equal(await share('signal-node-a'), 1, 'kept across heartbeats');
      await registry.setDraining('signal-node-a', false);
      assert.deepEqual([(await registry.getNode('signal-node-a', 60_000))?.draining, await share('signal-node-a')], [false, 0]);
      await registry.setDraining('signal-node-a', true, 60_000);
      assert.ok((await share('signal-node-a'))! < 0.5, 'drained again: a new start');
      await registry.setDraining('signal-node-b', true);
      assert.equal(await share('signal-node-b'), 1, 'no period: everything at once');
      await registry.setDraining('signal-node-b', false);
      await registry.leave('signal-node-b');
      assert.equal(await share('signal-node-b'), 1, 'a stop in progress releases everything');
      await assert.rejects(async () => registry.setDraining('signal-node-a', true, -1), RangeError);
    });

    it('paced return (issue 14): undraining a drained node paces its return from where its drain had got; asked again keeps it; a drain clears it', async () => {
      await registry.heartbeat(nodeInfo('signal-node-a'), 0);
      await registry.heartbeat(nodeInfo('signal-node-b'), 0);
      const row = async (code: string): Promise<[number, number]> => {
        const r = (await registry.getNode(code, 60_000))!;
        return [r.joinedShare, r.joinFrom];
      };
      assert.deepEqual(await row('signal-node-a'), [1, 1], 'not returning');
      await registry.setDraining('signal-node-a', false, 2000);
      assert.deepEqual(await row('signal-node-a'), [1, 1], 'undraining a node that is not draining changes nothing');
      await registry.setDraining('signal-node-a', true, 0);
      await registry.setDraining('signal-node-a', false, 2000);
      const [first, from] = await row('signal-node-a');
      assert.ok(first >= 0 && first < 0.5 && from === 1, `just started, after a finished drain: ${first}, ${from}`);
      await fx.advance(1000);
      await registry.setDraining('signal-node-a', false, 2000);
      const [mid] = await row('signal-node-a');
      assert.ok(mid >= 0.5 && mid <= 1, `the return kept its start: ${mid}`);
      await fx.advance(1100);
      assert.deepEqual(await row('signal-node-a'), [1, 1], 'done after the period');
      // undrained halfway through a drain: only what the drain had released comes back
      await registry.setDraining('signal-node-b', true, 2000);
      await fx.advance(1000);
      await registry.setDraining('signal-node-b', false, 60_000);
      const [started, half] = await row('signal-node-b');
      assert.ok(started < 0.5 && half >= 0.45 && half < 1, `from the drain's progress: ${started}, ${half}`);
      await registry.setDraining('signal-node-b', true, 0);
      assert.deepEqual(await row('signal-node-b'), [1, 1], 'a drain ends the return');
      assert.equal((await registry.getNode('signal-node-b', 60_000))?.drainedShare, 1);
    });

    it('codes are case-sensitive and listed in ordinal order', async () => {
      for (const code of ['node-b', 'Node-A', 'node-a']) await registry.heartbeat(nodeInfo(code), 0);
      const codes = (await registry.listNodes(10_000)).map((r) => r.code);
      assert.deepEqual(codes, ['Node-A', 'node-a', 'node-b']);
    });

    it('feeds the cascade election (CASC-1): smallest online flagged node', async () => {
      await registry.heartbeat(nodeInfo('signal-node-b', { cascadeNode: true }), 0);
      await registry.heartbeat(nodeInfo('signal-node-c', { cascadeNode: true }), 0);
      await registry.heartbeat(nodeInfo('signal-node-a', { cascadeNode: false }), 0);
      const nodes = await registry.listNodes(10_000);
      assert.equal(electCascadeLeader(nodes, 'signal-node-c'), 'signal-node-b');
    });

    it('close() is idempotent and later calls fail with StoreClosedError', async () => {
      await registry.close();
      await registry.close();
      await assert.rejects(registry.listNodes(1000), StoreClosedError);
      await assert.rejects(registry.heartbeat(nodeInfo('x'), 0), StoreClosedError);
    });
  });
}
