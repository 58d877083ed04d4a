// The probe loop with a fake clock and a scripted ZLM: an unreachable node goes probing → inactive and
// is skipped by selection, comes back active on its first good answer; nodes kept alive by keepalive
// hooks are not probed; one probe per node at a time; bad answers never crash the loop; close() stops it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeHealthTracker, StreamLedger, ZlmCallError, buildCandidates, selectLeastLoad, type MediaNode } from '@vms/media';
import pino from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createMediaProber } from './media-prober.ts';

const node = (id: string, enabled = true): MediaNode => ({
  id, apiBaseUrl: `http://${id}`, secret: 's', rtpPortRange: { min: 30000, max: 30500 }, sdpIp: '10.0.0.5', streamIp: '10.0.0.5',
  hookBaseUrl: '', enabled, weight: 1, httpPort: 80, rtspPort: 554, rtmpPort: 1935,
});
const POLICY = { probeAfterMs: 1000, staleAfterMs: 2000, failureThreshold: 2 };
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

type Answer = () => Promise<Record<string, string>>;

function setup(nodes: MediaNode[]) {
  const clock = new FakeClock(1_000_000);
  const health = new NodeHealthTracker(clock, POLICY);
  const calls: string[] = [];
  const answers = new Map<string, Answer>();
  const ok = (id: string): Answer => async () => ({ 'general.mediaServerId': id });
  const plane = {
    nodes: () => nodes,
    health,
    client: (n: MediaNode) => ({
      getServerConfig: () => {
        calls.push(n.id);
        return (answers.get(n.id) ?? ok(n.id))();
      },
    }),
  };
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const prober = createMediaProber({ plane, clock, log, intervalMs: 500 });
  const tick = async (ms = 500): Promise<void> => {
    clock.advance(ms);
    await settle();
  };
  const choose = (): string =>
    selectLeastLoad({
      channelId: '34020000001310000001',
      purpose: 'live',
      candidates: buildCandidates(nodes, { state: (id) => health.state(id), reportedStreams: () => 0, ledger: new StreamLedger() }),
    }).id;
  return { clock, health, calls, answers, prober, tick, lines, choose };
}

const refused = (id: string) => async (): Promise<never> => {
  throw new ZlmCallError('MEDIA_ERR_UNREACHABLE', `${id} getServerConfig: unreachable (ECONNREFUSED)`, { nodeId: id, api: 'getServerConfig' });
};

describe('media prober', () => {
  it('an unreachable node becomes inactive and is skipped; its first good answer brings it back', async () => {
    const t = setup([node('zlm-a'), node('zlm-b')]);
    t.prober.start();
    await t.prober.probeNow();
    assert.deepEqual([t.health.state('zlm-a'), t.health.state('zlm-b')], ['active', 'active']);
    assert.equal(t.choose(), 'zlm-a', 'tie: smaller id');

    t.answers.set('zlm-a', refused('zlm-a'));
    t.calls.length = 0;
    await t.tick(500); // nothing due yet: both confirmed 500 ms ago
    assert.deepEqual(t.calls, []);
    await t.tick(500); // probe-after reached
    assert.deepEqual(t.calls.sort(), ['zlm-a', 'zlm-b']);
    assert.equal(t.health.state('zlm-a'), 'probing');
    assert.equal(t.choose(), 'zlm-b', 'a suspect node loses to an active one');
    await t.tick(500);
    assert.equal(t.health.state('zlm-a'), 'inactive');
    const change = t.lines.filter((l) => l.msg === 'media node health changed' && l.nodeId === 'zlm-a').map((l) => [l.from, l.to, l.reason]);
    assert.deepEqual(change, [['probing', 'active', undefined], ['active', 'probing', 'MEDIA_ERR_UNREACHABLE'], ['probing', 'inactive', 'MEDIA_ERR_UNREACHABLE']]);

    t.answers.set('zlm-b', refused('zlm-b'));
    await t.tick(500);
    await t.tick(500);
    assert.equal(t.health.state('zlm-b'), 'inactive');
    assert.throws(() => t.choose(), { code: 'MEDIA_ERR_NO_NODE' });

    t.answers.delete('zlm-a'); // the node is back
    await t.tick(500);
    assert.equal(t.health.state('zlm-a'), 'active');
    assert.equal(t.choose(), 'zlm-a');
    await t.prober.close();
  });

  it('a change of the state a choice uses is logged even when no probe of this instance made it (the shared record catching up)', async () => {
    const t = setup([node('zlm-a')]);
    // the shared record (shared-node-health.ts: the worse of local and shared) still says inactive
    let shared: 'inactive' | 'active' = 'inactive';
    const local = t.health;
    const combined = {
      result: (id: string, ok: boolean) => local.result(id, ok),
      dueForProbe: (id: string) => local.dueForProbe(id),
      state: (id: string) => (shared === 'inactive' ? 'inactive' : local.state(id)),
    };
    const prober = createMediaProber({
      plane: { nodes: () => [node('zlm-a')], health: combined, client: () => ({ getServerConfig: async () => ({ 'general.mediaServerId': 'zlm-a' }) }) },
      clock: t.clock,
      log: pino({ level: 'info' }, { write: (l: string) => void t.lines.push(JSON.parse(l) as Record<string, unknown>) }),
      intervalMs: 500,
    });
    const changes = (): unknown[] => t.lines.filter((l) => l.msg === 'media node health changed').map((l) => [l.from, l.to]);
    prober.start();
    await t.tick(500);
    assert.equal(local.state('zlm-a'), 'active', 'the probe succeeded');
    assert.deepEqual(changes(), [], 'the state a choice uses did not change: nothing logged');
    shared = 'active'; // the shared record catches up, no probe involved (the node is not due again yet)
    await t.tick(500);
    assert.deepEqual(changes(), [['inactive', 'active']]);
    await t.tick(500);
    assert.deepEqual(changes(), [['inactive', 'active']], 'logged once');
    await prober.close();
  });

  it('nodes confirmed by keepalive hooks are not probed; disabled nodes never are', async () => {
    const t = setup([node('zlm-a'), node('zlm-off', false)]);
    t.prober.start();
    for (let i = 0; i < 6; i++) {
      t.health.keepalive('zlm-a', 0);
      await t.tick(500);
    }
    assert.deepEqual(t.calls, []);
    await t.tick(1000); // keepalives stopped: overdue
    assert.deepEqual(t.calls, ['zlm-a']);
    await t.prober.close();
  });

  it('one probe per node in flight: a hung node is not called again until its call settles', async () => {
    const t = setup([node('zlm-a')]);
    let finish!: (v: Record<string, string>) => void;
    t.answers.set('zlm-a', () => new Promise((r) => (finish = r)));
    t.prober.start();
    for (let i = 0; i < 5; i++) await t.tick(500);
    assert.deepEqual(t.calls, ['zlm-a']);
    assert.equal(t.prober.inFlight, 1);
    finish({ 'general.mediaServerId': 'zlm-a' });
    await settle();
    assert.equal(t.prober.inFlight, 0);
    assert.equal(t.health.state('zlm-a'), 'active');
    await t.prober.close();
  });

  it('bad answers are failed probes, never a crash: another node behind the URL, a thrown non-ZLM error', async () => {
    const t = setup([node('zlm-a'), node('zlm-b')]);
    t.answers.set('zlm-a', async () => ({ 'general.mediaServerId': 'someone-else' }));
    t.answers.set('zlm-b', () => {
      throw new TypeError('synchronous bug in a client');
    });
    await t.prober.probeNow();
    await t.prober.probeNow();
    assert.deepEqual([t.health.state('zlm-a'), t.health.state('zlm-b')], ['inactive', 'inactive']);
    const reasons = t.lines.filter((l) => l.msg === 'media node health changed' && l.to === 'inactive').map((l) => [l.nodeId, l.reason]).sort();
    assert.deepEqual(reasons, [['zlm-a', 'answered as media node "someone-else"'], ['zlm-b', 'unexpected error']]);
  });

  it('close() stops the loop: no timer left, a probe settling afterwards records nothing', async () => {
    const t = setup([node('zlm-a')]);
    let finish!: (v: Record<string, string>) => void;
    t.answers.set('zlm-a', () => new Promise((r) => (finish = r)));
    t.prober.start();
    await t.tick(500);
    assert.equal(t.calls.length, 1);
    await t.prober.close();
    await t.prober.close();
    assert.equal(t.clock.pending, 0);
    finish({ 'general.mediaServerId': 'zlm-a' });
    await settle();
    assert.equal(t.health.get('zlm-a').lastOkAt, undefined, 'late result dropped');
    t.prober.start();
    await t.tick(5000);
    assert.equal(t.calls.length, 1, 'a closed prober does not restart');
  });
});
