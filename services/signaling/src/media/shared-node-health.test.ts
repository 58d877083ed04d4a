// Media node health shared across instances (SPEC §10): two instances, each with its own routing wiring
// (its own Redis connections, as two processes would have) over one redis-server, and its own media plane.
// One instance's failed probes of a node take it out of the other's choice; an operator's disable through
// the HTTP handler on one instance holds on the other while its keepalives keep coming, until 'auto'.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryMediaNodeRegistry, createMemorySsrcAllocator, type MediaNode } from '@vms/media';
import { waitFor } from '@vms/harness';
import pino from 'pino';
import type { Principal } from '../auth/principal.ts';
import { systemClock } from '../core/clock.ts';
import { RoleForbiddenError, type BadParameterError } from '../errors/catalog.ts';
import { routingHandlers } from '../http/routes/routing.ts';
import type { HandlerContext } from '../http/handler.types.ts';
import type { RoutingWiring } from '../routing/routing-wiring.ts';
import { routingInstancesOverRedis } from '../routing/routing-instances.fixture.ts';
import { createMediaPlane, type MediaPlane } from './media-plane.ts';
import { combinedNodeState } from './shared-node-health.ts';

const log = pino({ level: 'silent' });
const operator = { tenantId: '000000', userId: 'ops', role: 'operator' } as Principal;
const ctx = (over: Partial<HandlerContext> = {}): HandlerContext => ({ query: {}, params: {}, principal: operator, log, ...over });
const SERVER_ID = '34020000002000000001';
const node = (id: string): MediaNode => ({
  id, apiBaseUrl: `http://${id}`, secret: 's', rtpPortRange: { min: 30000, max: 30500 }, sdpIp: '10.0.0.5', streamIp: '10.0.0.5',
  hookBaseUrl: '', enabled: true, weight: 1, httpPort: 80, rtspPort: 554, rtmpPort: 1935,
});
const h = (auto: 'active' | 'probing' | 'inactive', manual?: 'disabled' | 'enabled') => ({ auto, manual, probeFailures: 0, probeSuccesses: 0, businessFailures: 0, since: 0 });

describe('media node state: local and shared', () => {
  it('a manual override wins; else the worse of the two; nothing shared = the local state', () => {
    const cases: [Parameters<typeof combinedNodeState>[0], Parameters<typeof combinedNodeState>[1], string][] = [
      ['active', undefined, 'active'],
      ['probing', undefined, 'probing'],
      ['active', h('inactive'), 'inactive'],
      ['inactive', h('active'), 'inactive'],
      ['active', h('probing'), 'probing'],
      ['active', h('active', 'disabled'), 'inactive'],
      ['inactive', h('inactive', 'enabled'), 'active'],
    ];
    for (const [local, shared, want] of cases) assert.equal(combinedNodeState(local, shared), want, JSON.stringify([local, shared]));
  });
});

describe('media node health shared through Redis (two instances)', () => {
  const instances = routingInstancesOverRedis();

  async function instance(name: string): Promise<{ routing: RoutingWiring; plane: MediaPlane }> {
    const routing = await instances.open(name);
    routing.startHealth({});
    const plane = createMediaPlane({
      registry: createMemoryMediaNodeRegistry(),
      seed: [node('zlm-a'), node('zlm-b')],
      ssrcs: createMemorySsrcAllocator({ serverId: SERVER_ID }),
      clock: systemClock,
      log,
      apiTimeoutMs: 1000,
      refreshMs: 60_000,
      sharedHealth: routing.health,
    });
    await plane.start();
    instances.onClose(() => plane.close());
    const offKnown = routing.addKnownDestinations((id) => plane.node(id) !== undefined);
    instances.onClose(async () => offKnown());
    // both nodes confirmed by their keepalives on this instance: active locally
    plane.health.keepalive('zlm-a', 0);
    plane.health.keepalive('zlm-b', 5);
    return { routing, plane };
  }

  it("one instance's failed probes take a node out on the other; an operator's disable holds on both until auto", async () => {
    const a = await instance('a');
    const b = await instance('b');
    const choose = async (p: MediaPlane, channel: string): Promise<string> => (await p.choose(channel, 'live')).id;
    assert.equal(await choose(b.plane, '34020000001310000001'), 'zlm-a', 'least load: zlm-a has no stream');

    // instance a's probes of zlm-a fail (3 = the routing policy's threshold); b's own state of it stays active
    for (let i = 0; i < 3; i++) a.plane.health.result('zlm-a', false);
    await waitFor(() => b.routing.health.state('zlm-a') === 'inactive', { timeoutMs: 3000 });
    assert.equal(b.plane.health.get('zlm-a').consecutiveFailures, 0, "b's local tracker saw no failure");
    assert.equal(await choose(b.plane, '34020000001310000002'), 'zlm-b', 'b no longer chooses the node a found dead');

    // the node answers again (a's probes): back to active everywhere after the routing policy's 2 successes
    a.plane.health.result('zlm-a', true);
    await waitFor(() => b.routing.health.state('zlm-a') === 'probing', { timeoutMs: 3000 });
    a.plane.health.result('zlm-a', true);
    await waitFor(() => b.routing.health.state('zlm-a') === 'active', { timeoutMs: 3000 });
    assert.equal(await choose(b.plane, '34020000001310000003'), 'zlm-a');

    // an operator disables zlm-a on instance b (PUT /vms/routing/health/zlm-a): a stops choosing it
    const hb = routingHandlers(b.routing);
    const set = (await hb['routing.health.set'](ctx({ params: { destinationId: 'zlm-a' }, body: { manual: 'disabled' } }))) as { state: string; manual: string };
    assert.deepEqual([set.state, set.manual], ['inactive', 'disabled']);
    await waitFor(() => a.routing.health.state('zlm-a') === 'inactive', { timeoutMs: 3000 });
    // keepalives and good probes keep coming on a: the override is not lifted
    for (let i = 0; i < 4; i++) {
      a.plane.health.keepalive('zlm-a', 0);
      a.plane.health.result('zlm-a', true);
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await choose(a.plane, '34020000001310000004'), 'zlm-b', 'disabled by hand: never chosen');
    const listed = (await routingHandlers(a.routing)['routing.health.list'](ctx())) as { destinations: { destinationId: string; state: string; manual: string | null }[] };
    assert.deepEqual(listed.destinations.find((x) => x.destinationId === 'zlm-a'), { ...listed.destinations.find((x) => x.destinationId === 'zlm-a'), state: 'inactive', manual: 'disabled' });

    // 'auto' on instance a gives it back to its probed state (active) on b too
    await routingHandlers(a.routing)['routing.health.set'](ctx({ params: { destinationId: 'zlm-a' }, body: { manual: 'auto' } }));
    await waitFor(() => b.routing.health.state('zlm-a') === 'active', { timeoutMs: 3000 });
    assert.equal(await choose(b.plane, '34020000001310000005'), 'zlm-a');
  });

  it('the override route: an unknown destination or action is refused with the parameter named, and a tenant gets 403', async () => {
    const { routing } = await instance('c');
    const hc = routingHandlers(routing);
    const bad = async (p: Promise<unknown>, parameter: string): Promise<void> => {
      await assert.rejects(p, (e: BadParameterError) => e.parameter === parameter);
    };
    await bad(hc['routing.health.set'](ctx({ params: { destinationId: 'nobody' }, body: { manual: 'disabled' } })), 'destinationId');
    await bad(hc['routing.health.set'](ctx({ params: { destinationId: 'zlm-a' }, body: { manual: 'off' } })), 'manual');
    await bad(hc['routing.health.set'](ctx({ params: { destinationId: 'zlm-a' }, body: [] })), 'body');
    const tenant = { tenantId: '000000', userId: 'u', role: 'tenant' } as Principal;
    await assert.rejects(hc['routing.health.set'](ctx({ principal: tenant, params: { destinationId: 'zlm-a' }, body: { manual: 'disabled' } })), RoleForbiddenError);
  });
});
