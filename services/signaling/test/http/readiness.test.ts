// /readyz (the Kubernetes readiness probe, helm/gb28181-cluster): 503 while starting and from the
// moment a shutdown began, 200 in between; no token, under both path forms; /healthz unaffected.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Readiness } from '../../src/http/handler.types.ts';
import { buildFixture } from './fixture.ts';

describe('/readyz', () => {
  it('follows the instance phase: starting 503, ready 200, draining 503', async () => {
    let state: Readiness = { phase: 'starting', redis: 'connecting' };
    const f = await buildFixture({ readiness: () => state });
    const probe = async (url = '/readyz') => {
      const res = await f.app.inject({ method: 'GET', url });
      return { status: res.statusCode, body: res.json() as { code: number; data: unknown } };
    };
    assert.deepEqual(await probe(), { status: 503, body: { code: 503, success: false, msg: 'instance not ready: starting', data: null } });
    state = { phase: 'ready', redis: 'ready' };
    for (const url of ['/readyz', '/blade-iot/readyz']) {
      assert.deepEqual(await probe(url), { status: 200, body: { code: 200, success: true, msg: 'ok', data: { status: 'READY', instanceId: 'node-a', redis: 'ready' } } });
    }
    // a Redis outage does not take the instance out (FAIL-3: it degrades by itself)
    state = { phase: 'ready', redis: 'reconnecting' };
    assert.equal((await probe()).status, 200);
    state = { phase: 'draining', redis: 'ready' };
    assert.equal((await probe()).status, 503);
    assert.equal((await probe('/healthz')).status, 200, 'liveness stays up while draining');
  });

  it('is ready whenever HTTP answers when no readiness is wired', async () => {
    const f = await buildFixture();
    assert.equal((await f.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });
});
