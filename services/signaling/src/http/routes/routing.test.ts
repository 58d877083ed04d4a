// Routing administration handlers (SPEC §10): operator role required; draft edits, validate, publish
// (the reloader takes the version), decide explained, rollback in one call, shadow mode and its report.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { FakeClock } from '@vms/clock';
import { KEEP_WARM_RULES } from '@vms/routing';
import type { Principal } from '../../auth/principal.ts';
import { loadConfig } from '../../config/load.ts';
import { RoleForbiddenError, UnauthorizedError, type BadParameterError } from '../../errors/catalog.ts';
import { openRouting } from '../../routing/routing-wiring.ts';
import type { HandlerContext } from '../handler.types.ts';
import { routingHandlers } from './routing.ts';

const log = pino({ level: 'silent' });
const operator = { tenantId: '000000', userId: 'ops', role: 'operator' } as Principal;
const ctx = (over: Partial<HandlerContext> = {}): HandlerContext => ({ query: {}, params: {}, principal: operator, log, ...over });

async function open(): Promise<Awaited<ReturnType<typeof openRouting>>> {
  // the real configuration (zero-config: no MySQL, no Redis), so a section added to it cannot be missing here
  const config = loadConfig([], { VMS_GB28181_SIP_INSTANCE_ID: 'a' });
  return openRouting({ config, redis: null, clock: new FakeClock(0), log });
}

describe('routing administration', () => {
  it('refuses a token without the operator role (403), whatever the route', async () => {
    const routing = await open();
    const h = routingHandlers(routing);
    const tenant = { tenantId: '000000', userId: 'u', role: 'tenant' } as Principal;
    await assert.rejects(h['routing.draft'](ctx({ principal: tenant })), RoleForbiddenError);
    await assert.rejects(h['routing.publish'](ctx({ principal: tenant })), RoleForbiddenError);
    await assert.rejects(h['routing.draft'](ctx({ principal: null })), UnauthorizedError);
    await routing.close();
  });

  it('edits, validates, publishes, explains, shadows and rolls back', async () => {
    const routing = await open();
    const h = routingHandlers(routing);
    await h['routing.destinations.put'](ctx({ params: { destinationId: 'zlm-a' }, body: { kind: 'media', address: 'http://10.0.0.1' } }));
    await h['routing.destinations.put'](ctx({ params: { destinationId: 'zlm-b' }, body: { kind: 'media', address: 'http://10.0.0.2' } }));
    await h['routing.sets.put'](ctx({ params: { setId: 'east' }, body: { algorithm: 'swrr', members: [{ destinationId: 'zlm-a', weight: 5 }, { destinationId: 'zlm-c' }] } }));
    const rule = (await h['routing.rules.create'](ctx({ body: { group: 'media', field: 'device', prefix: '3402', setId: 'east' } }))) as { id: number };

    const invalid = (await h['routing.validate'](ctx())) as { valid: boolean; issues: { path: string; message: string }[] };
    assert.equal(invalid.valid, false);
    assert.match(invalid.issues[0]!.message, /destination 'zlm-c' does not exist/);
    assert.deepEqual(await h['routing.publish'](ctx()), { published: false, issues: invalid.issues, more: 0 });

    await h['routing.sets.put'](ctx({ params: { setId: 'east' }, body: { algorithm: 'swrr', members: [{ destinationId: 'zlm-a', weight: 5 }, { destinationId: 'zlm-b' }] } }));
    assert.deepEqual(await h['routing.publish'](ctx({ query: { comment: 'first' } })), { published: true, version: 1, ruleCount: 1 });
    assert.equal(await routing.reloader.check(), 'swapped');
    const d = (await h['routing.decide'](ctx({ query: { group: 'media', device: '34020000001320000001' } }))) as { live: { ruleId: number; version: number; destination: { id: string } } };
    assert.deepEqual([d.live.ruleId, d.live.version, d.live.destination.id], [rule.id, 1, 'zlm-a']);

    // version 2 sends 3402 to zlm-b only; shadow it against the live version 1 first
    await h['routing.sets.put'](ctx({ params: { setId: 'b-only' }, body: { algorithm: 'round-robin', members: [{ destinationId: 'zlm-b' }] } }));
    await h['routing.rules.update'](ctx({ params: { ruleId: String(rule.id) }, body: { group: 'media', field: 'device', prefix: '3402', setId: 'b-only' } }));
    assert.deepEqual(await h['routing.publish'](ctx()), { published: true, version: 2, ruleCount: 1 });
    assert.deepEqual(await h['routing.rollback'](ctx()), { from: 2, to: 1 });
    assert.deepEqual(await h['routing.shadow.start'](ctx({ query: { version: '2' } })), { shadow: true, version: 2 });
    const both = (await h['routing.decide'](ctx({ query: { group: 'media', device: '34020000001320000001' } }))) as { live: { destination: { id: string } }; shadow: { destination: { id: string }; version: number } };
    assert.deepEqual([both.live.destination.id, both.shadow.destination.id, both.shadow.version], ['zlm-a', 'zlm-b', 2]);
    assert.deepEqual(await h['routing.shadow.stop'](ctx()), { shadow: false });

    await assert.rejects(h['routing.rollback'](ctx()), (e: BadParameterError) => e.parameter === 'version');
    const versions = (await h['routing.versions'](ctx())) as { current: number; versions: { version: number; comment: string }[] };
    assert.equal(versions.current, 1);
    assert.deepEqual(versions.versions.map((v) => [v.version, v.comment]), [[2, ''], [1, 'first']]);
    await routing.close();
  });

  it('rejects malformed input with the parameter named', async () => {
    const routing = await open();
    const h = routingHandlers(routing);
    const bad = async (p: Promise<unknown>, parameter: string): Promise<void> => {
      await assert.rejects(p, (e: BadParameterError) => e.parameter === parameter);
    };
    await bad(h['routing.destinations.put'](ctx({ params: { destinationId: 'x' }, body: { kind: 'ftp', address: 'a' } })), 'kind');
    await bad(h['routing.sets.put'](ctx({ params: { setId: 's' }, body: { algorithm: 'fastest', members: [] } })), 'algorithm');
    await bad(h['routing.sets.put'](ctx({ params: { setId: 's' }, body: { algorithm: 'swrr', members: [{ destinationId: 'a', weight: -1 }] } })), 'weight');
    await bad(h['routing.rules.create'](ctx({ body: { group: 'media', field: 'device', prefix: '34ab', setId: 's' } })), 'prefix');
    await bad(h['routing.rules.update'](ctx({ params: { ruleId: 'one' }, body: {} })), 'ruleId');
    await bad(h['routing.rules.create'](ctx({ body: [] })), 'body');
    await routing.close();
  });

  it('the build thread of a small table is not kept: ended after 5 idle minutes (kept warm only from KEEP_WARM_RULES rules)', async () => {
    const clock = new FakeClock(0);
    const routing = await openRouting({ config: loadConfig([], { VMS_GB28181_SIP_INSTANCE_ID: 'a' }), redis: null, clock, log });
    assert.equal(routing.builder.threads, 0, 'nothing published: no thread');
    const h = routingHandlers(routing);
    await h['routing.destinations.put'](ctx({ params: { destinationId: 'zlm-a' }, body: { kind: 'media', address: 'http://10.0.0.1' } }));
    await h['routing.sets.put'](ctx({ params: { setId: 'east' }, body: { algorithm: 'swrr', members: [{ destinationId: 'zlm-a' }] } }));
    await h['routing.rules.create'](ctx({ body: { group: 'media', field: 'device', prefix: '3402', setId: 'east' } }));
    await h['routing.publish'](ctx());
    assert.equal(await routing.reloader.check(), 'swapped');
    assert.equal(routing.builder.threads, 1);
    assert.equal(routing.builder.keptWarm, false, 'one rule: not worth an idle thread');
    clock.advance(5 * 60_000);
    assert.equal(routing.builder.threads, 0, 'ended after the default idle time');
    await routing.close();
  });

  it('publishing a table of KEEP_WARM_RULES rules starts and warms the build thread before the version is there: its build pays no thread start', async () => {
    const clock = new FakeClock(0);
    const routing = await openRouting({ config: loadConfig([], { VMS_GB28181_SIP_INSTANCE_ID: 'a' }), redis: null, clock, log });
    try {
      const h = routingHandlers(routing);
      await h['routing.destinations.put'](ctx({ params: { destinationId: 'zlm-a' }, body: { kind: 'media', address: 'http://10.0.0.1' } }));
      await h['routing.sets.put'](ctx({ params: { setId: 'east' }, body: { algorithm: 'swrr', members: [{ destinationId: 'zlm-a' }] } }));
      // a small table first: its publish starts nothing
      await h['routing.rules.create'](ctx({ body: { group: 'media', field: 'device', prefix: '3402', setId: 'east' } }));
      await h['routing.publish'](ctx());
      assert.equal(routing.builder.threads, 0, 'one rule: no thread before its build');
      for (let i = 1; i < KEEP_WARM_RULES; i++) {
        await routing.store.addRule({ group: 'media', field: 'device', prefix: `34${String(i).padStart(10, '0')}`, priority: 0, setId: 'east', enabled: true });
      }
      const published = (await h['routing.publish'](ctx())) as { version: number; ruleCount: number };
      assert.equal(published.ruleCount, KEEP_WARM_RULES);
      assert.equal(routing.reloader.table.version, 0, 'not built yet');
      assert.equal(routing.builder.threads, 1, 'the publish started the build thread');
      const warmed = await routing.builder.warm(); // the warm-up the publish asked for, awaited
      assert.ok(warmed !== undefined && warmed.rules > 0);
      assert.equal(await routing.reloader.check(), 'swapped');
      assert.equal(routing.reloader.table.ruleCount, KEEP_WARM_RULES);
      assert.equal(routing.builder.last?.threadStartMs, 0, 'the build ran on the warmed thread');
    } finally {
      await routing.close();
    }
  });
});
