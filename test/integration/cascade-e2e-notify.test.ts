// End-to-end (SPEC CASC-3): events that arise on a non-leader instance (a device's alarm, the device
// going offline) reach the upstream as NOTIFYs from the leader, inside the subscription dialogs the
// upstream opened with the leader. The event crosses instances on the Redis cascade bus, by value.
// Alarms come as a MESSAGE first, then as a NOTIFY under the owner's alarm subscription; positions
// under its mobile-position subscription (GB/T 28181 §9.11), both turned on through the leader's API;
// when the device moves to another instance, that one subscribes again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultChannelIds } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { api, shares, useCascadeCluster, type Notified } from './cascade-cluster.ts';

const DEVICE = '34020000001320000301';
const CHANNELS = 2;

describe('NOTIFY to the upstream via the cascade bus (CASC-3)', () => {
  const cluster = useCascadeCluster();

  it('alarms, positions and offline of a device on a non-leader reach the upstream from the leader, in its subscription dialogs', async () => {
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

    // the device's owner subscribes to its alarms and positions (asked through the leader's API,
    // forwarded to the owner); what the device NOTIFYs reaches the upstream from the leader too
    await cluster.subscribe(leader, 'MobilePosition', notified);
    for (const [kind, extra] of [['alarm', ''], ['mobileposition', '&interval=1']] as const) {
      const on = await api(leader, `/vms/device/subscriptions?deviceId=${DEVICE}&kind=${kind}&enabled=true${extra}`, { method: 'POST' });
      assert.equal(on.json.success, true, JSON.stringify(on.json));
    }
    assert.deepEqual(device.subscriptions.map((sub) => sub.kind).sort(), ['Alarm', 'MobilePosition'], 'the owner subscribed');
    for (const sub of device.subscriptions) assert.equal(sub.dialog.remoteTarget.port, other.sipPort, 'subscribed from the owner');
    const position = await waitFor(() => notified.find((n) => n.kind === 'MobilePosition' && n.body.includes('<CmdType>MobilePosition</CmdType>')), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'MobilePosition NOTIFY at the upstream',
    });
    assert.equal(position.fromPort, leader.sipPort);
    assert.match(position.body, /<Longitude>116\.39\d+<\/Longitude>/);
    await device.raiseAlarm({ description: 'cascade-e2e-notify' }); // a NOTIFY to the owner now
    const viaNotify = await waitFor(() => notified.find((n) => n.kind === 'Alarm' && n.body.includes('cascade-e2e-notify')), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'the alarm the device NOTIFYd, at the upstream',
    });
    assert.equal(viaNotify.fromPort, leader.sipPort);
    // both alarms are listed on any instance (MySQL), newest first
    const listed = await waitFor(
      async () => {
        const page = (await api(leader, `/vms/alarms?deviceId=${DEVICE}`)).json.data as { records: { description: string; via: string }[] };
        return page.records.length >= 2 ? page.records : null;
      },
      { timeoutMs: 5000, intervalMs: 50, description: 'alarms listed on the leader' },
    );
    assert.deepEqual(listed.slice(0, 2).map((a) => [a.description, a.via]), [['cascade-e2e-notify', 'notify'], ['cascade-e2e', 'message']]);
    const latest = (await api(leader, `/vms/positions/latest?deviceId=${DEVICE}`)).json.data as { longitude: string } | null;
    assert.match(latest?.longitude ?? '', /^116\.39/);

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

    // the device comes back on the leader (ownership moves): its new owner subscribes again, from
    // the settings the old owner stored (MySQL), without anyone asking
    const moved = await cluster.device(leader, DEVICE, CHANNELS);
    await waitFor(() => moved.subscriptions.length >= 2, { timeoutMs: 8000, intervalMs: 50, description: 'subscribed again by the new owner' });
    assert.deepEqual(moved.subscriptions.map((sub) => sub.kind).sort(), ['Alarm', 'MobilePosition']);
    for (const sub of moved.subscriptions) assert.equal(sub.dialog.remoteTarget.port, leader.sipPort, 'subscribed from the new owner');
  });
});
