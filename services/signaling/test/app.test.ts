import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { signToken } from '../src/auth/jwt.ts';
import { loadConfig } from '../src/config/load.ts';
import { ShuttingDownError } from '../src/errors/catalog.ts';

const KEY = 'app-test-signing-key-0123456789ab';
const silent = pino({ level: 'silent' });

const dataRoot = mkdtempSync(join(tmpdir(), 'vms-app-'));
after(() => rmSync(dataRoot, { recursive: true, force: true }));
let apps = 0;

function config(env: NodeJS.ProcessEnv = {}) {
  return loadConfig([], { VMS_DATA_DIR: join(dataRoot, String(++apps)), SERVER_PORT: '0', SERVER_ADDRESS: '127.0.0.1', VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_INSTANCE_ID: 'node-t', VMS_AUTH_SIGNING_KEY: KEY, ...env });
}

describe('createApp', () => {
  it('starts standalone on embedded stores with nothing but a port, serves the API, closes idempotently', async () => {
    const app = createApp(config(), { logger: silent });
    const running = await app.start();
    assert.equal(await app.start(), running, 'start is idempotent');
    assert.ok(running.httpPort > 0);
    assert.equal(running.internalBaseUrl, `http://127.0.0.1:${running.httpPort}`, 'derived from the bound port');
    const health = await fetch(`${running.httpUrl}/blade-iot/healthz`);
    assert.deepEqual(await health.json(), { code: 200, success: true, msg: 'ok', data: { status: 'UP', instanceId: 'node-t', storage: 'embedded' } });
    const ready = await fetch(`${running.httpUrl}/readyz`);
    assert.equal(ready.status, 200, 'ready once started');
    assert.deepEqual(await ready.json(), { code: 200, success: true, msg: 'ok', data: { status: 'READY', instanceId: 'node-t', redis: null } });
    const scrape = await fetch(`${running.httpUrl}/metrics`); // no token: aggregates only
    assert.equal(scrape.status, 200);
    assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    assert.match(text, /^vms_instance_info\{instance_id="node-t",version="[^"]+"\} 1$/m);
    assert.match(text, /^vms_devices_online 0$/m);
    assert.match(text, /^vms_cascade_leader 1$/m, 'alone, it leads (CASC-5)');
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.equal((await fetch(`${running.httpUrl}/blade-iot/metrics`)).status, 200);
    const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60, role: 'operator' }, KEY, Date.now());
    const nodes = (await (await fetch(`${running.httpUrl}/vms/nodes`, { headers: { 'Blade-Auth': `bearer ${token}` } })).json()) as { data: { nodes: { internalBaseUrl: string }[] } };
    assert.equal(nodes.data.nodes[0]?.internalBaseUrl, running.internalBaseUrl);
    const info = (await (await fetch(`${running.httpUrl}/vms/device/info?deviceId=34020000001320000001`, { headers: { 'Blade-Auth': `bearer ${token}` } })).json()) as { code: number };
    assert.equal(info.code, 404, 'no such device yet (the operator role: 404; a tenant gets 403)');
    await Promise.all([app.close(), app.close()]);
    await app.close();
    await assert.rejects(fetch(`${running.httpUrl}/healthz`));
    await assert.rejects(app.start(), ShuttingDownError);
  });

  it('close before start and close after a failed start both settle', async () => {
    await createApp(config(), { logger: silent }).close();
    const broken = createApp(config({ MYSQL_URL: 'mysql://root:x@127.0.0.1:1/vms' }), { logger: silent });
    await assert.rejects(broken.start());
    await broken.close();
  });

  it('keeps a configured internal base URL', async () => {
    const app = createApp(config({ VMS_GB28181_SIP_INTERNAL_BASE_URL: 'http://10.0.0.11:80' }), { logger: silent });
    try {
      assert.equal((await app.start()).internalBaseUrl, 'http://10.0.0.11:80');
    } finally {
      await app.close();
    }
  });
});
