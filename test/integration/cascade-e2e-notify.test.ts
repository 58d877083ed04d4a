// End-to-end (SPEC CASC-3): events that arise on a non-leader instance (a device's alarm, the device
// going offline) reach the upstream as NOTIFYs from the leader, inside the subscription dialogs the
// upstream opened with the leader. The event crosses instances on the Redis cascade bus, by value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultChannelIds } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { shares, useCascadeCluster, type Notified } from './cascade-cluster.ts';

const DEVICE = '34020000001320000301';
const CHANNELS = 2;

describe('NOTIFY to the upstream via the cascade bus (CASC-3)', () => {
  const cluster = useCascadeCluster();

  it('alarm and offline of a device on a non-leader reach the upstream from the leader, in its subscription dialogs', async () => {
    const channelIds = defaultChannelIds(DEVICE, CHANNELS);
    const s = await cluster.database('casc_notify', shares(DEVICE, channelIds));
    const leader = await cluster.instance(s, 'casc-ntf-a', { cascade: true });
    const other = await cluster.instance(s, 'casc-ntf-b');
    await cluster.registered(leader);

    const notified: Notified[] = [];
    await cluster.subscribe(leader, 'Catalog', notified);
    await cluster.subscribe(leader, 'Alarm', notified);

    const device = await cluster.device(other, DEVICE, CHANNELS);
    await device.raiseAlarm({ description: 'cascade-e2e' });
    const alarm = await waitFor(() => notified.find((n) => n.kind === 'Alarm' && n.body.includes('<CmdType>Alarm</CmdType>')), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'Alarm NOTIFY at the upstream',
    });
    assert.equal(alarm.fromPort, leader.sipPort, 'NOTIFY sent by the leader');
    assert.match(alarm.body, new RegExp(`<DeviceID>${DEVICE}</DeviceID>`));
    assert.match(alarm.request.headers.get('Event') ?? '', /^Alarm/);

    await device.close(); // unregisters: offline on the non-leader → channel OFF notifies
    const offs = await waitFor(
      () => {
        const got = notified.filter((n) => n.kind === 'Catalog' && /<Event>OFF<\/Event>/.test(n.body));
        return got.length >= CHANNELS ? got : null;
      },
      { timeoutMs: 5000, intervalMs: 20, description: 'Catalog OFF NOTIFYs at the upstream' },
    );
    for (const n of offs) assert.equal(n.fromPort, leader.sipPort);
    const ids = offs.map((n) => /<Item>\s*<DeviceID>(\d{20})<\/DeviceID>/.exec(n.body)?.[1]).sort();
    assert.deepEqual(ids, [...channelIds].sort());
  });
});
