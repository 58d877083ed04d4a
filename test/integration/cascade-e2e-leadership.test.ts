// End-to-end (SPEC CASC-1, CASC-2, FAIL-2): real signaling instances (child processes) with Redis and
// MariaDB, and an upstream platform on @vms/sip in the test process. The cascade leader — smallest
// flagged node code, else smallest online node — registers upstream; the others do not. When the
// leader is killed (-9) the next node registers upstream within the node online window + 1 s.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { HEARTBEAT_S, useCascadeCluster } from './cascade-cluster.ts';

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
});
