// Upstream failover on a health change (SPEC §10 "upstream platform choice"): two upstream platforms in one
// redundancy group of the routing table (priority: primary, then backup), each a SIPp answering REGISTER,
// OPTIONS and MESSAGE. The cascade registers with the primary only; the routing health probes both with SIP
// OPTIONS. The primary's SIPp is killed: three unanswered OPTIONS make it inactive, and the registration
// moves to the backup at once (well before the 30 s platform resync, which this test never reaches). The
// primary's SIPp comes back: two answered OPTIONS make it active and the registration returns to it.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMemoryPlatformRepository, upstreamPlatform, type UpstreamPlatform } from '@vms/cascade';
import { createSnGenerator } from '@vms/gb28181';
import { freePort, runSipp, waitFor, type SippRun } from '@vms/harness';
import { compileTable, createMemoryHealthStore, RoutingHealthMonitor } from '@vms/routing';
import { chooseUpstreams, FakeClock, followUpstreamHealth, sipOptionsProber, systemClock, UpstreamRegistrations, UPSTREAM_ROUTING_GROUP } from '@vms/signaling';
import { createSipStack } from '@vms/sip';
import pino from 'pino';

const UAS = join(dirname(fileURLToPath(import.meta.url)), '..', 'sipp', 'routing', 'upstream-uas.xml');
const LOCAL_ID = '34020000002000000001';
const PRIMARY = '34010000002000000001';
const BACKUP = '34010000002000000002';
const log = pino({ level: 'silent' });

describe('upstream failover when health changes', () => {
  const sipps: SippRun[] = [];
  after(async () => {
    for (const s of sipps) await s.kill().catch(() => undefined);
  });
  const uas = (port: number): SippRun => {
    const s = runSipp({ scenario: UAS, localPort: port, transport: 'u1', timeoutMs: 120_000, traceMessages: false });
    sipps.push(s);
    return s;
  };

  it('the primary stops answering: the registration moves to the backup at once; it answers again: back to the primary', async () => {
    const [pPort, bPort] = [await freePort({ udp: true }), await freePort({ udp: true })];
    const primarySipp = uas(pPort);
    uas(bPort);
    const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'], timers: { T1: 100, T2: 400, T4: 500 } });
    const platform = (serverId: string, port: number): UpstreamPlatform => upstreamPlatform({ serverId, host: '127.0.0.1', port, transport: 'udp', localId: LOCAL_ID, password: 'pw' });
    const platforms = createMemoryPlatformRepository([platform(PRIMARY, pPort), platform(BACKUP, bPort)]);
    const compiled = compileTable({
      version: 1,
      timeZone: 'Asia/Shanghai',
      destinations: [
        { id: PRIMARY, kind: 'sip', address: `sip:127.0.0.1:${pPort}` },
        { id: BACKUP, kind: 'sip', address: `sip:127.0.0.1:${bPort}` },
      ],
      sets: [{ id: 'province', algorithm: 'priority', members: [{ destinationId: PRIMARY, weight: 1, priority: 0 }, { destinationId: BACKUP, weight: 1, priority: 1 }] }],
      rules: [{ id: 1, group: UPSTREAM_ROUTING_GROUP, field: 'callee', prefix: '3401', priority: 0, setId: 'province' }],
    });
    assert.ok(compiled.ok);
    const table = compiled.table;
    const health = new RoutingHealthMonitor({
      store: createMemoryHealthStore(),
      clock: systemClock,
      probers: { sip: sipOptionsProber(stack) },
      destinations: () => table.destinations(),
      intervalMs: 250,
      timeoutMs: 200,
      log,
    });
    // the resync timer of the service never fires here: a FakeClock that is never advanced
    const registrations = new UpstreamRegistrations({
      platforms,
      sip: stack,
      clock: new FakeClock(Date.now()),
      sn: createSnGenerator(),
      log,
      choose: (enabled) => chooseUpstreams(enabled, table, health.state, Date.now()),
    });
    const stop = followUpstreamHealth({ onChange: (l) => health.onChange(l), isPlatform: (id) => id === PRIMARY || id === BACKUP, reconcile: () => registrations.reconcile(), log });
    try {
      await health.start();
      await registrations.activate();
      assert.deepEqual([...registrations.running.keys()], [PRIMARY], 'the group registers its primary only');
      await waitFor(() => registrations.running.get(PRIMARY)?.state.online === true, { timeoutMs: 10_000 });

      await primarySipp.kill();
      const t0 = Date.now();
      await waitFor(() => registrations.running.has(BACKUP) && !registrations.running.has(PRIMARY), { timeoutMs: 10_000 });
      const failoverMs = Date.now() - t0;
      assert.equal(health.state(PRIMARY), 'inactive');
      await waitFor(() => registrations.running.get(BACKUP)?.state.online === true, { timeoutMs: 10_000 });
      assert.ok(failoverMs < 10_000, `failed over in ${failoverMs} ms (the resync would take 30 s)`);

      uas(pPort); // the primary answers again
      await waitFor(() => registrations.running.has(PRIMARY) && !registrations.running.has(BACKUP), { timeoutMs: 10_000 });
      assert.equal(health.state(PRIMARY), 'active', 'back only once active (two answered probes), not on the first');
      await waitFor(() => registrations.running.get(PRIMARY)?.state.online === true, { timeoutMs: 10_000 });
    } finally {
      stop();
      health.close();
      registrations.deactivate();
      await stack.close();
    }
  });
});
