// `npm start`'s configuration (no Redis, no MySQL) keeps its state in the data directory: devices and
// channels registered by device-sim devices, an upstream platform and its shared channel created
// through the API, and a media node seeded from VMS_MEDIA_NODES are all there after a SIGTERM restart
// and after a kill -9 restart, with nothing re-registering and the media node no longer configured.
// A second instance pointed at a directory in use is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice } from '@vms/device-sim';
import { spawnManaged, tsxArgs, waitFor } from '@vms/harness';
import { operatorToken, REPO_ROOT, SERVER_ID, startInstance, type Instance } from './signaling-fixture.ts';

const NVR = '34020000001180000001';
const IPC = '34020000001320000002';
const UPSTREAM = '34010000002000000001';
const UPSTREAM_2 = '35010000002000000001';
const MEDIA_ID = 'zlm-persist';
const MEDIA_SECRET = 'persist-media-secret';
const MEDIA_NODES = JSON.stringify([{ id: MEDIA_ID, apiBaseUrl: 'http://127.0.0.1:9', secret: MEDIA_SECRET, sdpIp: '127.0.0.1' }]);

interface Answer {
  readonly status: number;
  readonly json: { code: number; success: boolean; msg: string; data: unknown };
}

async function call(instance: Instance, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${instance.httpUrl}${path}`, {
    method,
    headers: { 'Blade-Auth': `bearer ${operatorToken()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Answer['json'] };
}

/** A hook from the media node (its secret, its id): 200 only when this instance knows the node. */
async function mediaHook(instance: Instance, nodeId: string): Promise<number> {
  const res = await fetch(`${instance.httpUrl}/vms/webhook/on_server_keepalive?secret=${MEDIA_SECRET}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mediaServerId: nodeId, data: {} }),
  });
  await res.body?.cancel();
  return res.status;
}

interface Snapshot {
  readonly devices: string[];
  readonly nvrChannels: number;
  readonly ipcChannels: number;
  readonly platforms: string[];
  readonly shares: unknown;
}

async function snapshot(instance: Instance): Promise<Snapshot> {
  const devices = (await call(instance, 'GET', '/vms/devices?size=100')).json.data as { records: { deviceId: string }[] };
  const channels = async (id: string): Promise<number> => ((await call(instance, 'GET', `/vms/channels?deviceId=${id}&size=100`)).json.data as { total: number }).total;
  const platforms = (await call(instance, 'GET', '/vms/platforms')).json.data as { serverId: string }[];
  return {
    devices: devices.records.map((d) => d.deviceId),
    nvrChannels: await channels(NVR),
    ipcChannels: await channels(IPC),
    platforms: platforms.map((p) => p.serverId),
    shares: (await call(instance, 'GET', `/vms/platforms/${UPSTREAM}/channels`)).json.data,
  };
}

describe('standalone instance: state kept in the data directory across restarts', () => {
  let dataDir: string;
  let instance: Instance | undefined;
  const start = async (extra: Record<string, string> = {}): Promise<Instance> => {
    instance = await startInstance({ VMS_DATA_DIR: dataDir, ...extra });
    return instance;
  };

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'vms-persist-'));
  });
  after(async () => {
    await instance?.proc.kill().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  let first: Snapshot;

  it('first run: devices register, catalogs sync, a platform shares a channel, a media node is configured', async () => {
    const a = await start({ VMS_MEDIA_NODES: MEDIA_NODES });
    for (const [deviceId, channels] of [[NVR, 4], [IPC, 1]] as const) {
      const device = createSimulatedDevice({ server: { host: '127.0.0.1', port: a.sipPort, id: SERVER_ID }, deviceId, password: 'gb-device-pw', channels });
      try {
        await device.start();
        await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
        assert.equal((await call(a, 'POST', `/vms/device/catalog/sync?deviceId=${deviceId}`)).json.success, true);
        await waitFor(async () => ((await call(a, 'GET', `/vms/channels?deviceId=${deviceId}`)).json.data as { total?: number }).total === channels, {
          timeoutMs: 15_000,
          intervalMs: 100,
          description: `${channels} channels of ${deviceId} stored`,
        });
      } finally {
        await device.close(); // gone before the restart: nothing re-registers
      }
    }
    const created = await call(a, 'POST', '/vms/platforms', { serverId: UPSTREAM, host: '192.0.2.1', port: 5060, password: 'up-pw', enabled: false });
    assert.equal(created.json.success, true, JSON.stringify(created.json));
    const channel = ((await call(a, 'GET', `/vms/channels?deviceId=${NVR}`)).json.data as { records: { channelId: string }[] }).records[1]?.channelId;
    assert.ok(channel !== undefined);
    const shared = await call(a, 'PUT', `/vms/platforms/${UPSTREAM}/channels`, [{ deviceId: NVR, channelId: channel, parentId: null }]);
    assert.equal(shared.json.success, true, JSON.stringify(shared.json));
    assert.equal(await mediaHook(a, MEDIA_ID), 200);
    assert.notEqual(await mediaHook(a, 'zlm-unknown'), 200, 'a node nobody configured is refused');

    first = await snapshot(a);
    assert.deepEqual(first.devices, [NVR, IPC].sort());
    assert.deepEqual([first.nvrChannels, first.ipcChannels, first.platforms], [4, 1, [UPSTREAM]]);
    assert.deepEqual(first.shares, [{ deviceId: NVR, channelId: channel, catalogGroupId: null, parentId: null }]);
    const exit = await a.proc.stop(); // SIGTERM
    assert.equal(exit.code, 0);
  });

  it('after SIGTERM: the same devices, channels, platform, share and media node (no longer configured)', async () => {
    const b = await start();
    assert.deepEqual(await snapshot(b), first);
    assert.equal(await mediaHook(b, MEDIA_ID), 200, 'the media node seeded in the first run is still known');
    const platform = (await call(b, 'GET', '/vms/platforms')).json.data as { serverId: string; host: string; password: string; enabled: boolean }[];
    assert.deepEqual(platform.map((p) => [p.serverId, p.host, p.password, p.enabled]), [[UPSTREAM, '192.0.2.1', '******', false]]);
  });

  it('a second instance on the same data directory is refused with a clear message', async () => {
    const other = spawnManaged(process.execPath, tsxArgs(join(REPO_ROOT, 'services', 'signaling', 'src', 'main.ts')), {
      name: 'signaling-2',
      cwd: REPO_ROOT,
      env: { ...process.env, VMS_DATA_DIR: dataDir, SERVER_PORT: '0', SERVER_ADDRESS: '127.0.0.1', VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', MYSQL_URL: '', REDIS_URL: '' },
    });
    const exit = await other.exited;
    assert.equal(exit.code, 1);
    assert.match(other.output(), /data directory is in use by another instance/);
  });

  it('a change acknowledged just before kill -9 is there after the restart', async () => {
    const b = instance;
    assert.ok(b !== undefined);
    const created = await call(b, 'POST', '/vms/platforms', { serverId: UPSTREAM_2, host: '192.0.2.2', enabled: false });
    assert.equal(created.json.success, true, JSON.stringify(created.json));
    await b.proc.kill(); // SIGKILL: no close, no flush
    const c = await start();
    const after = await snapshot(c);
    assert.deepEqual(after, { ...first, platforms: [UPSTREAM, UPSTREAM_2] });
    assert.equal(await mediaHook(c, MEDIA_ID), 200);
    await c.stop();
    instance = undefined;
  });
});
