import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceOfflineError, ForwardingDisabledError } from '../../src/errors/catalog.ts';
import type { OwnerRoutingHook } from '../../src/http/handler.types.ts';
import { ROUTING_PARAM, type RouteSpec } from '../../src/http/route-table.ts';
import { buildFixture, CH, DEV } from './fixture.ts';

describe('owner-routing slot (ROUTE-1, ROUTE-5)', () => {
  it('runs before the handler of routed endpoints only, with the route-table entry', async () => {
    const seen: { route: RouteSpec; key: string | undefined; tenant: string }[] = [];
    const hook: OwnerRoutingHook = async ({ route, request, principal }) => {
      const key = route.routedBy === null ? undefined : (request.query as Record<string, string>)[ROUTING_PARAM[route.routedBy]];
      seen.push({ route, key, tenant: principal.tenantId });
      return 'local';
    };
    const f = await buildFixture({ ownerRouting: hook });
    const headers = await f.auth();
    await f.app.inject({ method: 'GET', url: '/vms/devices', headers });
    await f.app.inject({ method: 'POST', url: `/blade-iot/vms/ptz/control?channelId=${CH}&command=left`, headers });
    await f.app.inject({ method: 'GET', url: `/vms/device/info?deviceId=${DEV}`, headers });
    assert.deepEqual(seen.map((s) => [s.route.id, s.route.routedBy, s.key, s.tenant]), [
      ['ptz.control', 'channel', CH, '000000'],
      ['device.info', 'device', DEV, '000000'],
    ]);
    assert.equal(f.calls.length, 2);
  });

  it('does not run for unauthenticated requests', async () => {
    let called = 0;
    const f = await buildFixture({ ownerRouting: async () => (called++, 'local') });
    const res = await f.app.inject({ method: 'GET', url: `/vms/device/info?deviceId=${DEV}` });
    assert.equal(res.statusCode, 401);
    assert.equal(called, 0);
  });

  it('a hook that replies (a forward) keeps the local handler from running', async () => {
    const f = await buildFixture({
      ownerRouting: async ({ reply }) => {
        await reply.status(200).type('application/json').send('{"code":200,"success":true,"msg":"from owner","data":null}');
        return 'handled';
      },
    });
    const res = await f.app.inject({ method: 'POST', url: `/vms/ptz/control?channelId=${CH}&command=left`, headers: await f.auth() });
    assert.equal(res.json().msg, 'from owner');
    assert.equal(f.calls.length, 0);
  });

  it('routing failures thrown by the hook become uniform envelopes (never 5xx)', async () => {
    for (const [err, code] of [[new DeviceOfflineError(DEV), 4601], [new ForwardingDisabledError(DEV, 'node-b'), 4602]] as const) {
      const f = await buildFixture({
        ownerRouting: async () => {
          throw err;
        },
      });
      const res = await f.app.inject({ method: 'GET', url: `/vms/device/status?deviceId=${DEV}`, headers: await f.auth() });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().code, code);
      assert.equal(f.calls.length, 0);
    }
  });
});
