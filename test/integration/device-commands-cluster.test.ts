// The device-command routes are owner-routed like PTZ moves (SPEC ROUTE-1..5): two instances on real
// Redis and MariaDB, a simulated 2022 device and a 2016 one registered on node-a, every call made on
// node-b. The answers are the owner's: the device's presets and position, Result ERROR as 4607, 4610
// for the 2016 device, and 4601 for a device nobody owns.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { api, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

const DEV22 = '34020000001320000071';
const DEV16 = '34020000001320000072';
const NOBODY = '34020000001320000079';

describe('device commands across instances (owner routing)', () => {
  let stores: Stores;
  let a: Instance;
  let b: Instance;
  const devices: SimulatedDevice[] = [];
  const onB = async (method: 'GET' | 'POST', path: string) => (await api(b, path, { method, timeoutMs: 25_000 })).json;

  const register = async (deviceId: string, gbVersion: '2016' | '2022'): Promise<string> => {
    const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: a.sipPort, id: SERVER_ID }, deviceId, password: 'unused', channels: 1, gbVersion });
    devices.push(d);
    await d.start();
    await waitFor(() => d.registered, { timeoutMs: 10_000, description: `${deviceId} registered on node-a` });
    const sync = await api(a, `/vms/device/catalog/sync?deviceId=${deviceId}`, { method: 'POST' });
    assert.equal(sync.json.success, true, sync.json.msg);
    await waitFor(async () => ((await api(a, `/vms/channels?deviceId=${deviceId}`)).json.data as { total: number }).total === 1, { timeoutMs: 15_000 });
    return d.channelIds[0] ?? '';
  };

  before(async () => {
    stores = await startStores();
    [a, b] = await Promise.all([startInstance(stores, 'node-a'), startInstance(stores, 'node-b')]);
  });
  after(async () => {
    await Promise.all(devices.map((d) => d.close()));
    await Promise.all([a?.proc.stop(), b?.proc.stop()]);
    await stores?.stop();
  });

  it('presets, position and track queries asked on node-b are answered by node-a’s device', async () => {
    const ch = await register(DEV22, '2022');
    assert.deepEqual(await onB('POST', `/vms/ptz/preset?channelId=${ch}&action=set&presetId=5`), { code: 200, success: true, msg: 'ok', data: null });
    assert.deepEqual((await onB('GET', `/vms/ptz/presets?channelId=${ch}`)).data, [{ presetId: '5', presetName: '预置点5' }]);
    assert.equal((await onB('POST', `/vms/ptz/precise?channelId=${ch}&pan=10&tilt=20&zoom=2`)).code, 200);
    const position = (await onB('GET', `/vms/ptz/position?channelId=${ch}`)).data as { fields: Record<string, string> };
    assert.deepEqual([position.fields['Pan'], position.fields['Tilt'], position.fields['Zoom']], ['10', '20', '2']);
    const missing = await onB('GET', `/vms/ptz/cruise/track?channelId=${ch}&number=9`);
    assert.equal(missing.code, 4607, missing.msg);
  });

  it('a 2016 device owned by node-a: 4610 through node-b; a device nobody owns: 4601', async () => {
    const ch = await register(DEV16, '2016');
    const refused = await onB('GET', `/vms/ptz/position?channelId=${ch}`);
    assert.deepEqual([refused.code, refused.success], [4610, false], refused.msg);
    await stores.pool.query(
      `INSERT INTO gb_device (device_id, tenant_id, online, keepalive_at, registered_at, created_at, updated_at) VALUES (?, '000000', 1, NOW(3), NOW(3), NOW(3), NOW(3))`,
      [NOBODY],
    );
    const offline = await onB('GET', `/vms/device/sdcard?deviceId=${NOBODY}`);
    assert.equal(offline.code, 4601, offline.msg);
  });
});
