// End-to-end (SPEC CASC-1, CASC-2, FAIL-2): real signaling instances (child processes) with Redis and
// MariaDB, and an upstream platform on @vms/sip in the test process. The cascade leader — smallest
// flagged node code, else smallest online node — registers upstream; the others do not. When the
// leader is killed (-9) the next node registers upstream within the node online window + 1 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@vms/test';
import { databaseWithPlatform, startTestUpstream, type TestUpstream } from './cascade-e2e-upstream.ts';
import { startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

/** Node heartbeat period; a node is online for 3 periods (NODE_ONLINE_WINDOW_HEARTBEATS). */
const HEARTBEAT_S = 0.5;
const NODE_TTL_MS = HEARTBEAT_S * 3 * 1000;
const ENV = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: String(HEARTBEAT_S), LOG_LEVEL: 'info' };

describe('cascade leadership and upstream registration (CASC-1, CASC-2, FAIL-2)', () => {
  let stores: Stores;
  let upstream: TestUpstream;
  const running: Instance[] = [];

  before(async () => {
    stores = await startStores();
    upstream = await startTestUpstream();
  });
  after(async () => {
    await Promise.all(running.map((i) => i.proc.stop().catch(() => undefined)));
    await upstream?.close();
    await stores?.stop();
  });

  it('two flagged nodes: the smaller registers upstream; killed -9, the next one registers within node TTL + 1 s', async () => {
    const s = await databaseWithPlatform(stores, 'casc_flagged', upstream);
    const b = await startInstance(s, 'casc-node-b', { cascade: true, env: ENV });
    running.push(b);
    const a = await startInstance(s, 'casc-node-a', { cascade: true, env: ENV });
    running.push(a);

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
    const s = await databaseWithPlatform(stores, 'casc_unflagged', upstream);
    const d = await startInstance(s, 'casc-node-d', { cascade: false, env: ENV });
    running.push(d);
    const c = await startInstance(s, 'casc-node-c', { cascade: false, env: ENV });
    running.push(c);
    await waitFor(() => upstream.registersFrom(c.sipPort).length > 0, { timeoutMs: 10_000, intervalMs: 20, description: 'REGISTER from casc-node-c' });
    const settledAt = Date.now();
    await new Promise((r) => setTimeout(r, 3 * NODE_TTL_MS));
    assert.equal(upstream.registersFrom(d.sipPort).filter((r) => r.at > settledAt + 2 * HEARTBEAT_S * 1000).length, 0);
    await Promise.all([c.proc.stop(), d.proc.stop()]);
  });
});
