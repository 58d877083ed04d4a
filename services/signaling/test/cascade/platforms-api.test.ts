// The platforms API (src/http/routes/platforms.ts, SPEC CASC-2) for a platform that does not exist:
// every endpoint naming one answers the catalog's not-found (VMS_ERR_PLATFORM_NOT_FOUND: HTTP 404,
// envelope code 404), never a bad-parameter 400; a malformed id stays a 400.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryPlatformRepository, upstreamPlatform } from '@vms/cascade';
import { pino } from 'pino';
import { signToken } from '../../src/auth/jwt.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createStandaloneNodeDirectory } from '../../src/nodes/node-directory.standalone.ts';
import { createSelfOwnerDirectory } from '../../src/ownership/owner-directory.standalone.ts';
import { createUnavailableDeviceControl } from '../../src/control/device-control.unavailable.ts';

const KEY = 'platforms-api-test-key-0123456789abcdef';
const NOW = Date.UTC(2025, 5, 1);
const KNOWN = '34010000002000000001';
const UNKNOWN = '34010000002000000099';
const LOCAL_ID = '34020000002000000001';

async function build() {
  const clock = new FakeClock(NOW);
  const devices = createMemoryDeviceRepository();
  const platforms = createMemoryPlatformRepository();
  await platforms.upsert(upstreamPlatform({ serverId: KNOWN, host: '127.0.0.1', port: 5060, localId: LOCAL_ID }));
  const changed: string[] = [];
  const app = buildHttpApp({
    instanceId: 'node-a',
    signingKey: KEY,
    storage: 'memory',
    devices,
    control: createUnavailableDeviceControl(),
    nodes: createStandaloneNodeDirectory({
      nodeCode: 'node-a', sipAddress: '127.0.0.1:5060', internalBaseUrl: () => 'http://127.0.0.1:18080', cascadeNode: true,
      version: '0.1.0', startedAt: NOW, clock, devices,
    }),
    owners: createSelfOwnerDirectory('node-a'),
    clock,
    logger: pino({ level: 'silent' }),
    utcOffsetMinutes: 480,
    platforms: { platforms, localId: LOCAL_ID, platformChanged: async (id) => void changed.push(id) },
  });
  const headers = { 'blade-auth': `bearer ${await signToken({ tenantId: '000000', userId: 'u1', ttlSec: 3600 }, KEY, NOW)}`, 'content-type': 'application/json' };
  return { app, headers, changed };
}

describe('platforms API: unknown platform', () => {
  it('PUT / DELETE / GET channels / PUT channels of an unknown platform: 404 with the not-found code; the known one works', async () => {
    const { app, headers, changed } = await build();
    const channels = JSON.stringify({ channels: [{ deviceId: '34020000001320000001', channelId: '34020000001310000001' }] });
    const calls = [
      { method: 'PUT', url: `/vms/platforms/${UNKNOWN}`, payload: JSON.stringify({ name: 'x' }) },
      { method: 'DELETE', url: `/vms/platforms/${UNKNOWN}` },
      { method: 'GET', url: `/vms/platforms/${UNKNOWN}/channels` },
      { method: 'PUT', url: `/vms/platforms/${UNKNOWN}/channels`, payload: channels },
      { method: 'GET', url: `/blade-iot/vms/platforms/${UNKNOWN}/channels` },
    ] as const;
    for (const c of calls) {
      const res = await app.inject({ ...c, headers });
      assert.equal(res.statusCode, 404, `${c.method} ${c.url}`);
      assert.deepEqual(res.json(), { code: 404, success: false, msg: `unknown upstream platform ${UNKNOWN}`, data: null }, `${c.method} ${c.url}`);
    }
    assert.deepEqual(changed, [], 'nothing restarted for an unknown platform');

    const bad = await app.inject({ method: 'DELETE', url: '/vms/platforms/nope', headers });
    assert.equal(bad.statusCode, 400);
    const put = await app.inject({ method: 'PUT', url: `/vms/platforms/${KNOWN}/channels`, payload: channels, headers });
    assert.equal(put.json().success, true);
    const del = await app.inject({ method: 'DELETE', url: `/vms/platforms/${KNOWN}`, headers });
    assert.deepEqual(del.json().data, { removed: true });
    const again = await app.inject({ method: 'DELETE', url: `/vms/platforms/${KNOWN}`, headers });
    assert.equal(again.statusCode, 404, 'deleted twice: the second time it is unknown');
    assert.deepEqual(changed, [KNOWN]);
  });
});
