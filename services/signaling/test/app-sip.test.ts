// createApp with its SIP side: bound ports reported, a device registered over SIP appears online in the
// API, device events are exposed, close() answers waiting queries and stops SIP.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { signToken } from '../src/auth/jwt.ts';
import { loadConfig } from '../src/config/load.ts';
import { bodies, startFakeDevice } from './sip/fake-device.ts';

const KEY = 'app-sip-test-signing-key-0123456789';
const DEV = '34020000001320000001';
const dataRoot = mkdtempSync(join(tmpdir(), 'vms-app-sip-'));
after(() => rmSync(dataRoot, { recursive: true, force: true }));

describe('createApp with the SIP device side', () => {
  it('binds SIP with HTTP, serves registered devices, rejects waiting queries on close', async () => {
    const env = {
      SERVER_PORT: '0',
      SERVER_ADDRESS: '127.0.0.1',
      VMS_GB28181_SIP_HOST: '127.0.0.1',
      VMS_GB28181_SIP_PORT: '0',
      VMS_GB28181_SIP_INSTANCE_ID: 'node-s',
      VMS_DATA_DIR: join(dataRoot, 'a'),
      VMS_AUTH_SIGNING_KEY: KEY,
    };
    const app = createApp(loadConfig([], env), { logger: pino({ level: 'silent' }), queryTimeouts: { deviceInfoMs: 30_000 } });
    const online: string[] = [];
    app.events.on('online', (e) => online.push(e.deviceId));
    const running = await app.start();
    assert.ok(running.sipPort !== null && running.sipPort > 0);
    const dev = await startFakeDevice(DEV, running.sipPort);
    try {
      assert.equal((await dev.register()).status, 200, 'no password configured: no challenge');
      assert.equal((await dev.send(bodies.keepalive(DEV))).status, 200);
      assert.deepEqual(online, [DEV]);
      const headers = { 'Blade-Auth': `bearer ${await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, Date.now())}` };
      const device = (await (await fetch(`${running.httpUrl}/vms/devices/${DEV}`, { headers })).json()) as { data: { online: boolean; ownerNode: string; transport: string } };
      assert.deepEqual([device.data.online, device.data.ownerNode, device.data.transport], [true, 'node-s', 'UDP']);

      // A DeviceInfo query the device never answers is still waiting when the app closes: 503, not a hang.
      const waiting = fetch(`${running.httpUrl}/vms/device/info?deviceId=${DEV}`, { headers });
      await dev.next('DeviceInfo');
      const started = Date.now();
      await app.close();
      const res = await waiting;
      assert.equal(res.status, 503);
      assert.ok(Date.now() - started < 5000);
      await app.close();
      const sipPort = running.sipPort;
      const probe = createSocket('udp4');
      await new Promise<void>((resolve, reject) => probe.once('error', reject).bind(sipPort, '127.0.0.1', resolve));
      probe.close(); // the SIP port is free again: SIP closed with the app
    } finally {
      await dev.close();
      await app.close();
    }
  });

  it('listens on bind-host and announces host: a device reaching the listening address sees the announced one', async () => {
    const env = {
      SERVER_PORT: '0',
      SERVER_ADDRESS: '127.0.0.1',
      VMS_GB28181_SIP_HOST: '192.0.2.10', // what devices are told (documentation range: nobody listens there)
      VMS_GB28181_SIP_BIND_HOST: '127.0.0.1',
      VMS_GB28181_SIP_PORT: '0',
      VMS_GB28181_SIP_INSTANCE_ID: 'node-b',
      VMS_DATA_DIR: join(dataRoot, 'b'),
      VMS_AUTH_SIGNING_KEY: KEY,
    };
    const app = createApp(loadConfig([], env), { logger: pino({ level: 'silent' }) });
    const running = await app.start();
    const dev = await startFakeDevice(DEV, running.sipPort ?? 0);
    try {
      assert.equal((await dev.register()).status, 200);
      const headers = { 'Blade-Auth': `bearer ${await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, Date.now())}` };
      void fetch(`${running.httpUrl}/vms/device/info?deviceId=${DEV}`, { headers }).catch(() => undefined);
      const query = await dev.next('DeviceInfo');
      assert.ok((query.request.headers.get('Via') ?? '').startsWith(`SIP/2.0/UDP 192.0.2.10:${running.sipPort};`), query.request.headers.get('Via') ?? '');
    } finally {
      await dev.close();
      await app.close();
    }
  });
});
