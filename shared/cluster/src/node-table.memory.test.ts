import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import { createMemoryNodeRegistry } from './node-table.memory.ts';
import type { NodeInfo } from './node-table.port.ts';

const info = (code: string, cascadeNode = false): NodeInfo => ({
  code,
  sipHost: '10.0.0.11',
  sipPort: 5060,
  internalBaseUrl: 'http://10.0.0.11:80',
  cascadeNode,
  startedAt: new Date(0),
  version: '0.1.0',
});

describe('memory NodeRegistry with a fake clock', () => {
  it('judges online by the registry clock and the given window', async () => {
    const clock = new FakeClock(1_000_000);
    const reg = createMemoryNodeRegistry({ clock });
    await reg.heartbeat(info('b'), 3);
    clock.advance(5000);
    await reg.heartbeat(info('a', true), 7);
    const rows = await reg.listNodes(4000);
    assert.deepEqual(
      rows.map((r) => [r.code, r.online, r.onlineDeviceCount, r.cascadeNode]),
      [
        ['a', true, 7, true],
        ['b', false, 3, false],
      ],
    );
    assert.equal((await reg.getNode('b', 6000))?.online, true);
    assert.equal(await reg.getNode('zzz', 6000), null);
    assert.equal((await reg.getNode('a', 0))?.lastHeartbeat.getTime(), 1_005_000);
  });

  it('a heartbeat upserts: the second one replaces the first', async () => {
    const reg = createMemoryNodeRegistry({ clock: new FakeClock() });
    await reg.heartbeat(info('a'), 1);
    await reg.heartbeat({ ...info('a'), sipPort: 5070 }, 2);
    const rows = await reg.listNodes(1000);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.sipPort, 5070);
    assert.equal(rows[0]?.onlineDeviceCount, 2);
  });

  it('refuses calls after close()', async () => {
    const reg = createMemoryNodeRegistry();
    await reg.close();
    await assert.rejects(reg.listNodes(1000), StoreClosedError);
  });
});
