import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createMemoryNodeRegistry, NodeRegistryUnavailableError, type NodeInfo, type NodeRegistry } from '@vms/cluster';
import { pino } from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createNodeHeartbeat } from './node-heartbeat.ts';
import { NodeTracker } from './node-tracker.ts';

const INTERVAL = 1000;
const info = (code: string, baseUrl = `http://${code}`): NodeInfo => ({
  code,
  sipHost: '127.0.0.1',
  sipPort: 5060,
  internalBaseUrl: baseUrl,
  cascadeNode: false,
  startedAt: new Date(0),
  version: 't',
});

function setup(opts: { secret: boolean }) {
  const clock = new FakeClock(0);
  const inner = createMemoryNodeRegistry({ clock });
  const state = { down: false, beats: 0, beatAt: [] as number[], listDelayMs: 0 };
  const registry: NodeRegistry = {
    ...inner,
    heartbeat: async (self, n) => {
      state.beats++;
      state.beatAt.push(clock.now());
      if (state.down) throw new NodeRegistryUnavailableError('down');
      return inner.heartbeat(self, n);
    },
    listNodes: async (windowMs) => {
      if (state.listDelayMs > 0) await new Promise<void>((r) => clock.setTimeout(() => r(), state.listDelayMs));
      return inner.listNodes(windowMs);
    },
  };
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  const tracker = new NodeTracker({ registry, selfCode: 'node-a', onlineWindowMs: 3 * INTERVAL, clock });
  let url = 'http://127.0.0.1:0';
  let count = 7;
  const hb = createNodeHeartbeat({
    registry,
    tracker,
    self: () => info('node-a', url),
    onlineDeviceCount: () => count,
    intervalMs: INTERVAL,
    clock,
    log,
    forwardSecretConfigured: opts.secret,
  });
  return {
    clock, inner, state, tracker, hb, lines,
    setUrl: (u: string) => (url = u),
    setCount: (n: number) => (count = n),
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('node heartbeat (NODE-1, NODE-2, FAIL-4, ROUTE-6)', () => {
  it('upserts at start and every interval with the current base URL and device count', async () => {
    const { clock, inner, hb, setUrl, setCount } = setup({ secret: true });
    await hb.start();
    let row = await inner.getNode('node-a', 3000);
    assert.deepEqual([row?.internalBaseUrl, row?.onlineDeviceCount, row?.online], ['http://127.0.0.1:0', 7, true]);
    setUrl('http://127.0.0.1:18081');
    setCount(3);
    clock.advance(INTERVAL);
    await settle();
    row = await inner.getNode('node-a', 3000);
    assert.deepEqual([row?.internalBaseUrl, row?.onlineDeviceCount], ['http://127.0.0.1:18081', 3]);
    await hb.close();
    await hb.close();
    clock.advance(10 * INTERVAL);
    assert.equal(clock.pending, 0, 'no timer left after close');
    assert.equal((await inner.getNode('node-a', 60 * INTERVAL))?.online, false, 'left: offline at once, not when its heartbeat ages out');
  });

  it('a slow re-read of the table does not push the next upsert back (fixed rate)', async () => {
    const { clock, state, hb } = setup({ secret: true });
    await hb.start();
    state.listDelayMs = 0.8 * INTERVAL; // every re-read now takes most of an interval
    for (let t = 0; t < 4 * INTERVAL; t += 100) {
      clock.advance(100);
      await settle();
    }
    assert.deepEqual(state.beatAt, [0, INTERVAL, 2 * INTERVAL, 3 * INTERVAL, 4 * INTERVAL]);
    state.listDelayMs = 0;
    clock.advance(INTERVAL);
    await settle();
    await hb.close();
  });

  it('MySQL down: the loop keeps trying, logs once, and reports recovery', async () => {
    const { clock, state, hb, lines } = setup({ secret: true });
    state.down = true;
    const started = hb.start(); // does not throw
    await settle();
    clock.advance(100);
    await started;
    for (let i = 0; i < 3; i++) {
      clock.advance(INTERVAL);
      await settle();
      clock.advance(100); // the in-beat retry's back-off
      await settle();
    }
    assert.ok(state.beats >= 4, `beats ${state.beats}`);
    assert.deepEqual(lines.filter((l) => l.level === 40).map((l) => l.msg), ['node heartbeat failed, retrying every interval']);
    state.down = false;
    clock.advance(INTERVAL);
    await settle();
    assert.ok(lines.some((l) => l.msg === 'node heartbeat recovered'));
    await hb.close();
  });

  it('no secret and more than one node online: one warning, not one per beat', async () => {
    const { clock, inner, hb, lines } = setup({ secret: false });
    await hb.start();
    assert.equal(lines.filter((l) => l.level === 40).length, 0, 'alone: no warning');
    await inner.heartbeat(info('node-b'), 0);
    for (let i = 0; i < 3; i++) {
      await inner.heartbeat(info('node-b'), 0);
      clock.advance(INTERVAL);
      await settle();
    }
    const warns = lines.filter((l) => l.level === 40);
    assert.equal(warns.length, 1);
    assert.match(warns[0]?.msg ?? '', /no node-forward-secret/);
    await hb.close();
  });
});
