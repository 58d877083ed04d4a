// Routing destination health (SPEC §10) with real peers: the SIP OPTIONS prober against SIPp answering
// OPTIONS, the HTTP prober against a local HTTP server taken down and brought back, and two instances
// (each its own Redis connections, as two processes would have) sharing one state through redis-server:
// both count against it, and each sees the other's changes within one probe interval (at once, by the
// change channel) — including an operator's manual disable that probing never lifts.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createRedisClient, waitForRedisReady, type RedisClient } from '@vms/cluster';
import {
  createRedisHealthStore,
  ROUTING_HEALTH_KEY,
  RoutingHealthMonitor,
  subscribeHealthChanges,
  type Destination,
  type Prober,
} from '@vms/routing';
import { httpGetProber, sipOptionsProber, systemClock } from '@vms/signaling';
import { createSipStack, type SipStack } from '@vms/sip';
import { freePort, runSipp, startRedis, waitFor, type RedisServer } from '@vms/harness';

const OPTIONS_UAS = join(dirname(fileURLToPath(import.meta.url)), '..', 'sipp', 'routing', 'options-uas.xml');
const quiet = { info: () => undefined, warn: () => undefined };
const POLICY = { probeFailuresToInactive: 3, probeSuccessesToActive: 2, businessFailuresToInactive: 3 };

let redis: RedisServer;
const clients: RedisClient[] = [];
async function client(name: string): Promise<RedisClient> {
  const c = createRedisClient(redis.url, { connectionName: name });
  clients.push(c);
  await waitForRedisReady(c);
  return c;
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of clients) c.disconnect();
  await redis.stop();
});

/** An HTTP server on a fixed port that can be stopped and started again. */
async function httpServer(): Promise<{ port: number; up(): Promise<void>; down(): Promise<void> }> {
  const port = await freePort();
  let server: Server | undefined;
  return {
    port,
    async up() {
      const s = createServer((_req, res) => res.end('ok'));
      await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
      server = s;
    },
    async down() {
      const s = server;
      server = undefined;
      if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()).closeAllConnections());
    },
  };
}

/** One instance: its own command and subscriber connections, a monitor over the shared store. */
async function instance(name: string, dests: Destination[], probers: Partial<Record<'sip' | 'http', Prober>>): Promise<RoutingHealthMonitor> {
  const store = createRedisHealthStore(await client(`${name}:cmd`));
  const m = new RoutingHealthMonitor({ store, clock: systemClock, probers, destinations: () => dests, intervalMs: 60_000, timeoutMs: 500, policy: POLICY, log: quiet });
  await subscribeHealthChanges(await client(`${name}:sub`), () => void m.refresh());
  return m;
}

describe('routing health with real peers', () => {
  it('HTTP GET prober: a server going down is alive, then not; back up, alive again', async () => {
    const srv = await httpServer();
    const probe = httpGetProber();
    const d: Destination = { id: 'web', kind: 'http', address: `http://127.0.0.1:${srv.port}/health` };
    await srv.up();
    assert.equal(await probe(d, 1000), true);
    await srv.down();
    assert.equal(await probe(d, 1000), false);
    await srv.up();
    assert.equal(await probe(d, 1000), true);
    await srv.down();
    assert.equal(await probe({ ...d, address: 'ftp://127.0.0.1/' }, 1000), false, 'not an HTTP URL');
  });

  it('SIP OPTIONS prober: SIPp answering OPTIONS is alive; SIPp gone, the probe fails within its timeout', async () => {
    const stack: SipStack = await createSipStack({ host: '127.0.0.1', port: 0 });
    const port = await freePort({ udp: true });
    const sipp = runSipp({ scenario: OPTIONS_UAS, localPort: port, transport: 'u1', timeoutMs: 60_000, traceMessages: false });
    try {
      const probe = sipOptionsProber(stack);
      const d: Destination = { id: 'peer', kind: 'sip', address: `sip:127.0.0.1:${port}` };
      assert.equal(await waitFor(() => probe(d, 1000), { timeoutMs: 10_000, intervalMs: 200 }), true);
      await sipp.stop();
      const t0 = Date.now();
      assert.equal(await probe(d, 800), false);
      assert.ok(Date.now() - t0 < 2000, 'bounded by the probe timeout');
    } finally {
      await sipp.stop();
      await stack.close();
    }
  });

  it('two instances share one state through Redis and agree at once; a manual disable holds on both', async () => {
    await (await client('reset')).del(ROUTING_HEALTH_KEY);
    const srv = await httpServer();
    await srv.up();
    const dests: Destination[] = [{ id: 'web', kind: 'http', address: `http://127.0.0.1:${srv.port}/` }];
    const a = await instance('a', dests, { http: httpGetProber() });
    const b = await instance('b', dests, { http: httpGetProber() });
    try {
      await a.round();
      await b.round();
      assert.equal(a.state('web'), 'active');
      assert.equal(b.state('web'), 'active');

      // down: failures from both instances count against the one state (a, b, a = three in a row)
      await srv.down();
      await a.round();
      await b.round();
      assert.equal(a.state('web'), 'active');
      await a.round();
      assert.equal(a.state('web'), 'inactive');
      await waitFor(() => b.state('web') === 'inactive', { timeoutMs: 2000 }); // b ran no round: the change channel told it

      // back up: one success → probing everywhere, a second (from the other instance) → active everywhere
      await srv.up();
      await b.round();
      assert.equal(b.state('web'), 'probing');
      await waitFor(() => a.state('web') === 'probing', { timeoutMs: 2000 });
      await a.round();
      await waitFor(() => b.state('web') === 'active', { timeoutMs: 2000 });

      // an operator disables it on b; a's successful probes never lift it, on either instance
      await b.setManual('web', 'disabled');
      await waitFor(() => a.state('web') === 'inactive', { timeoutMs: 2000 });
      for (let i = 0; i < 3; i++) await a.round();
      assert.equal(a.state('web'), 'inactive');
      assert.equal(b.state('web'), 'inactive');
      await a.setManual('web', 'auto');
      await waitFor(() => b.state('web') === 'active', { timeoutMs: 2000 });

      // business failures reported by callers on different instances count together
      await a.reportBusiness('web', false);
      await b.reportBusiness('web', false);
      await a.reportBusiness('web', false);
      await waitFor(() => b.state('web') === 'inactive', { timeoutMs: 2000 });
    } finally {
      a.close();
      b.close();
      await srv.down();
    }
  });

  it('a record written by something else that is not a health reads as absent (active), never a crash', async () => {
    const c = await client('garbage');
    await c.hset(ROUTING_HEALTH_KEY, 'junk', '{"auto":"dead"}', 'huge', 'x'.repeat(5000), 'notjson', '{');
    const store = createRedisHealthStore(c);
    const all = await store.all();
    assert.equal(all.has('junk') || all.has('huge') || all.has('notjson'), false);
    const h = await store.apply('junk', { kind: 'probe', ok: false }, Date.now(), POLICY);
    assert.equal(h.auto, 'active');
    assert.equal(h.probeFailures, 1, 'the bad record was replaced by a fresh one');
  });
});
