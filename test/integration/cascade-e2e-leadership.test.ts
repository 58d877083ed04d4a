// End-to-end (SPEC CASC-1, CASC-2, FAIL-2): real signaling instances (child processes) with Redis and
// MariaDB, and an upstream platform on @vms/sip in the test process. The cascade leader — smallest
// flagged node code, else smallest online node — registers upstream; the others do not. When the
// leader is killed (-9) the next node registers upstream within the node online window + 1 s.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { SETTINGS } from '@vms/signaling';
import { HEARTBEAT_S, logLines, useCascadeCluster } from './cascade-cluster.ts';

/** A node is online for 3 heartbeat periods (NODE_ONLINE_WINDOW_HEARTBEATS). */
const NODE_TTL_MS = HEARTBEAT_S * 3 * 1000;

describe('cascade leadership and upstream registration (CASC-1, CASC-2, FAIL-2)', () => {
  const cluster = useCascadeCluster();

  it('two flagged nodes: the smaller registers upstream; killed -9, the next one registers within node TTL + 1 s', async () => {
    const { upstream } = cluster;
    const s = await cluster.database('casc_flagged');
    const b = await cluster.instance(s, 'casc-node-b', { cascade: true });
    const a = await cluster.instance(s, 'casc-node-a', { cascade: true });

    await waitFor(() => upstream.registersFrom(a.sipPort).length > 0, { timeoutMs: 10_000, intervalMs: 20, description: 'REGISTER from casc-node-a' });
    // b may have led alone for a moment before a's first heartbeat; from then on only a registers
    const settledAt = Date.now();
    await new Promise((r) => setTimeout(r, 3 * NODE_TTL_MS));
    const lateFromB = upstream.registersFrom(b.sipPort).filter((r) => r.at > settledAt + 2 * HEARTBEAT_S * 1000);
    assert.equal(lateFromB.length, 0, 'the non-leader does not register upstream');

    const killedAt = Date.now();
    await a.proc.kill();
    const reg = await waitFor(() => upstream.registersFrom(b.sipPort).find((r) => r.at >= killedAt), {
      timeoutMs: 15_000,
      intervalMs: 10,
      description: 'REGISTER from casc-node-b after the leader died',
    });
    const failoverMs = reg.at - killedAt;
    console.log(`FAILOVER: leader killed -9 → next node registered upstream after ${failoverMs} ms (node TTL ${NODE_TTL_MS} ms, bound ${NODE_TTL_MS + 1000} ms)`);
    assert.ok(failoverMs <= NODE_TTL_MS + 1000, `failover took ${failoverMs} ms`);
    await b.proc.stop();
  });

  it('with the default heartbeat (5 s, window 15 s), killed -9: the next one registers within the window + 1 s, not a beat later', async () => {
    const { upstream } = cluster;
    const s = await cluster.database('casc_default_beat');
    const heartbeatS = Number(SETTINGS.find((x) => x.key === 'vms.gb28181.sip.node-heartbeat-interval')?.default);
    assert.ok(heartbeatS >= 5, 'the default heartbeat is what this test is about');
    const env = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: String(heartbeatS) };
    const windowMs = 3 * heartbeatS * 1000;
    const h = await cluster.instance(s, 'casc-node-h', { cascade: true, env });
    const g = await cluster.instance(s, 'casc-node-g', { cascade: true, env });
    await waitFor(() => upstream.registersFrom(g.sipPort).length > 0, { timeoutMs: windowMs, intervalMs: 20, description: 'REGISTER from casc-node-g' });
    await waitFor(() => logLines(h, 'cascade leader').some((l) => l.leader === 'casc-node-g'), { timeoutMs: windowMs, intervalMs: 20, description: 'casc-node-h follows casc-node-g' });
    // kill at a random point of g's beat: up to a whole beat may pass before h's own next read
    await new Promise((r) => setTimeout(r, Math.random() * heartbeatS * 1000));
    const killedAt = Date.now();
    await g.proc.kill();
    const reg = await waitFor(() => upstream.registersFrom(h.sipPort).find((r) => r.at >= killedAt), {
      timeoutMs: windowMs + 10_000,
      intervalMs: 10,
      description: 'REGISTER from casc-node-h after the leader died',
    });
    const failoverMs = reg.at - killedAt;
    console.log(`FAILOVER (default heartbeat): leader killed -9 → next node registered upstream after ${failoverMs} ms (window ${windowMs} ms, bound ${windowMs + 1000} ms)`);
    assert.ok(failoverMs <= windowMs + 1000, `failover took ${failoverMs} ms`);
    await h.proc.stop();
  });

  it('no flagged node: the smallest online node registers upstream, the other does not', async () => {
    const { upstream } = cluster;
    const s = await cluster.database('casc_unflagged');
    const d = await cluster.instance(s, 'casc-node-d');
    const c = await cluster.instance(s, 'casc-node-c');
    await cluster.registered(c);
    const settledAt = Date.now();
    await new Promise((r) => setTimeout(r, 3 * NODE_TTL_MS));
    assert.equal(upstream.registersFrom(d.sipPort).filter((r) => r.at > settledAt + 2 * HEARTBEAT_S * 1000).length, 0);
    await Promise.all([c.proc.stop(), d.proc.stop()]);
  });

  it('the leader stopped on purpose (SIGTERM) leaves the node table: the next one registers within a heartbeat, not a window', async () => {
    const { upstream } = cluster;
    const s = await cluster.database('casc_graceful');
    const heartbeatS = 2; // online window 6 s: waiting it out could not meet the bound below
    const env = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: String(heartbeatS) };
    const f = await cluster.instance(s, 'casc-node-f', { cascade: true, env });
    const e = await cluster.instance(s, 'casc-node-e', { cascade: true, env });
    await waitFor(() => upstream.registersFrom(e.sipPort).length > 0, { timeoutMs: 3 * heartbeatS * 1000 + 5000, intervalMs: 20, description: 'REGISTER from casc-node-e' });
    // f led alone until its next read showed e: from then on e leads in f's view too
    await waitFor(() => logLines(f, 'cascade leader').some((l) => l.leader === 'casc-node-e'), { timeoutMs: 3 * heartbeatS * 1000, intervalMs: 20, description: 'casc-node-f follows casc-node-e' });

    const stoppedAt = Date.now();
    await e.proc.stop(); // SIGTERM: the instance leaves the node table first, then drains
    const reg = await waitFor(() => upstream.registersFrom(f.sipPort).find((r) => r.at >= stoppedAt), {
      timeoutMs: 15_000,
      intervalMs: 10,
      description: 'REGISTER from casc-node-f after the leader stopped',
    });
    const takeoverMs = reg.at - stoppedAt;
    const bound = heartbeatS * 1000 + 1000;
    console.log(`GRACEFUL: leader stopped → next node registered upstream after ${takeoverMs} ms (heartbeat ${heartbeatS * 1000} ms, window ${3 * heartbeatS * 1000} ms, bound ${bound} ms)`);
    assert.ok(takeoverMs <= bound, `takeover took ${takeoverMs} ms`);
    await f.proc.stop();
  });
});
