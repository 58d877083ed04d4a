// End-to-end (GB/T 28181-2016 §9.4, §9.11; issue 16 items 5-7): one signaling instance as a child process
// and device-sim devices. Subscriptions are turned on through the API: the device answers, NOTIFYs
// catalog items, positions and alarms; the platform applies, stores and lists them, refreshes before
// the device's short grant ends, unsubscribes on request, and subscribes again by itself when the
// device registers anew. A device that ignores SUBSCRIBE (sample 13) leaves the subscription
// `unanswered` within the answer wait, the API answering all along.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice, type SimulatedDeviceOptions } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { operatorToken, PASSWORD, SERVER_ID, startInstance, type Envelope, type Instance } from './signaling-fixture.ts';

const DEVICE = '34020000001320000701';
const QUIET = '34020000001320000702';

interface SubsView {
  settings: Record<string, boolean | number>;
  subscriptions: { kind: string; state: string; expiresAt: number | null; nextAt: number | null; lastError: string | null }[];
}
interface PageOf<T> {
  records: T[];
  total: number;
}
interface Alarm {
  deviceId: string;
  description: string | null;
  via: string;
  method: string;
  priority: string;
}
interface Position {
  deviceId: string;
  longitude: string;
  latitude: string;
  receivedAt: number;
}

describe('subscriptions to devices, alarms and positions (device side)', () => {
  let instance: Instance;
  const devices: SimulatedDevice[] = [];
  const sim = async (deviceId: string, extra: Partial<SimulatedDeviceOptions> = {}): Promise<SimulatedDevice> => {
    const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: PASSWORD, channels: 2, ...extra });
    devices.push(d);
    await d.start();
    await waitFor(() => d.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
    return d;
  };
  const subscribe = (deviceId: string, kind: string, enabled: boolean, extra = ''): Promise<Envelope<SubsView>> =>
    instance.api<SubsView>('POST', `/vms/device/subscriptions?deviceId=${deviceId}&kind=${kind}&enabled=${enabled}${extra}`);
  const stateOf = (v: SubsView, kind: string): string | undefined => v.subscriptions.find((s) => s.kind === kind)?.state;

  before(async () => {
    instance = await startInstance();
  });
  after(async () => {
    for (const d of devices) await d.close();
    await instance.stop();
  });

  it('subscribes, stores NOTIFYd alarms, positions and catalog changes, refreshes, unsubscribes, re-subscribes after a new registration', async () => {
    const device = await sim(DEVICE, { subscriptionMaxExpiresS: 4 });

    const alarmOn = await subscribe(DEVICE, 'alarm', true);
    assert.equal(alarmOn.success, true, JSON.stringify(alarmOn));
    assert.equal(stateOf(alarmOn.data, 'alarm'), 'active');
    assert.equal(stateOf((await subscribe(DEVICE, 'mobileposition', true, '&interval=1')).data, 'mobileposition'), 'active');
    assert.equal(stateOf((await subscribe(DEVICE, 'catalog', true)).data, 'catalog'), 'active');
    assert.deepEqual(device.subscriptions.map((s) => s.kind).sort(), ['Alarm', 'Catalog', 'MobilePosition']);

    // catalog: the device NOTIFYs its items at once (Event ADD); the platform stores them
    await waitFor(async () => (await instance.api<PageOf<unknown>>('GET', `/vms/channels?deviceId=${DEVICE}`)).data.total === 2, {
      timeoutMs: 5000,
      intervalMs: 50,
      description: 'channels from the catalog NOTIFY stored',
    });
    // an alarm travels as a NOTIFY in the alarm subscription, is stored and listed
    await device.raiseAlarm({ description: 'e2e-notify', priority: '2' });
    const notified = await waitFor(
      async () => (await instance.api<PageOf<Alarm>>('GET', `/vms/alarms?deviceId=${DEVICE}`)).data.records.find((a) => a.description === 'e2e-notify'),
      { timeoutMs: 5000, intervalMs: 50, description: 'alarm listed' },
    );
    assert.deepEqual([notified.via, notified.priority, notified.method], ['notify', '2', '2']);
    assert.equal((await instance.api<PageOf<Alarm>>('GET', `/vms/alarms?deviceId=${DEVICE}&alarmPriority=1`)).data.total, 0, 'filtered by priority');

    // positions every second: latest and the track
    const latest = await waitFor(async () => (await instance.api<Position | null>('GET', `/vms/positions/latest?deviceId=${DEVICE}`)).data, {
      timeoutMs: 5000,
      intervalMs: 100,
      description: 'a position stored',
    });
    assert.match(latest.longitude, /^116\.39\d+$/);
    const track = await waitFor(
      async () => {
        const t = (await instance.api<PageOf<Position>>('GET', `/vms/positions?deviceId=${DEVICE}`)).data;
        return t.total >= 2 ? t : null;
      },
      { timeoutMs: 6000, intervalMs: 200, description: 'a track of two positions' },
    );
    const times = track.records.map((p) => p.receivedAt);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'oldest first');
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await instance.api<PageOf<Position>>('GET', `/vms/positions?deviceId=${DEVICE}&startTime=${encodeURIComponent(future)}`)).data.total, 0, 'time range applied');

    // the device grants 4 s: each subscription is refreshed in its dialog (3 s in), not replaced
    const alarmSub = device.subscriptions.find((s) => s.kind === 'Alarm');
    await waitFor(() => (alarmSub?.refreshes ?? 0) >= 2, { timeoutMs: 10_000, intervalMs: 100, description: 'two refreshes of the alarm subscription' });
    assert.equal(device.subscriptions.length, 3, 'refreshed in the same dialogs, no new SUBSCRIBE');
    const view = (await instance.api<SubsView>('GET', `/vms/device/subscriptions?deviceId=${DEVICE}`)).data;
    assert.deepEqual(view.subscriptions.map((s) => s.state), ['active', 'active', 'active']);

    // a catalog change NOTIFYd by the device is applied
    await device.notifyCatalog('OFF', 0);
    await waitFor(
      async () => (await instance.api<PageOf<{ channelId: string; status: string }>>('GET', `/vms/channels?deviceId=${DEVICE}`)).data.records.some((c) => c.status === 'OFF'),
      { timeoutMs: 5000, intervalMs: 50, description: 'channel OFF applied' },
    );

    // alarm subscription off: the device is told (Expires 0); its next alarm comes as a MESSAGE
    const off = await subscribe(DEVICE, 'alarm', false);
    assert.equal(off.data.settings['alarm'], false);
    await waitFor(() => alarmSub?.active === false, { timeoutMs: 5000, intervalMs: 50, description: 'the device ended the alarm subscription' });
    await device.raiseAlarm({ description: 'e2e-message' });
    const byMessage = await waitFor(
      async () => {
        const newest = (await instance.api<PageOf<Alarm>>('GET', `/vms/alarms?deviceId=${DEVICE}`)).data.records[0];
        return newest?.description === 'e2e-message' ? newest : null;
      },
      { timeoutMs: 5000, intervalMs: 50, description: 'alarm by MESSAGE listed first' },
    );
    assert.equal(byMessage.via, 'message');

    // alarm reset (AlarmCmd) and guard (GuardCmd) reach the device
    for (const action of ['resetalarm', 'guard']) assert.equal((await instance.api('POST', `/vms/device/control?deviceId=${DEVICE}&action=${action}`)).success, true);
    assert.deepEqual(
      device.controls.filter((c) => c.command.type === 'AlarmCmd' || c.command.type === 'GuardCmd').map((c) => c.command),
      [{ type: 'AlarmCmd', value: 'ResetAlarm' }, { type: 'GuardCmd', value: 'SetGuard' }],
    );

    // another tenant sees none of it
    const foreign = await fetch(`${instance.httpUrl}/vms/alarms?deviceId=${DEVICE}`, { headers: { 'Blade-Auth': `bearer ${operatorToken(undefined, '000001')}` } });
    assert.equal(foreign.status, 403);

    // the device restarts on a new port: the platform subscribes again to what is on (catalog, positions)
    await device.close();
    const again = await sim(DEVICE, { subscriptionMaxExpiresS: 4 });
    await waitFor(() => again.subscriptions.length >= 2, { timeoutMs: 8000, intervalMs: 50, description: 'subscribed again after the new registration' });
    assert.deepEqual(again.subscriptions.map((s) => s.kind).sort(), ['Catalog', 'MobilePosition']);
  });

  it('a device that ignores SUBSCRIBE: unanswered within the wait, nothing hangs', async () => {
    const quiet = await sim(QUIET);
    quiet.ignoresSubscribe = true;
    const t0 = Date.now();
    const res = await subscribe(QUIET, 'catalog', true);
    const took = Date.now() - t0;
    assert.equal(res.success, true, JSON.stringify(res));
    assert.equal(stateOf(res.data, 'catalog'), 'unanswered');
    assert.ok(took < 8000, `answered after ${took} ms`);
    assert.ok(quiet.ignoredSubscribes >= 1);
    const view = (await instance.api<SubsView>('GET', `/vms/device/subscriptions?deviceId=${QUIET}`)).data;
    const sub = view.subscriptions[0];
    assert.ok(sub !== undefined && sub.nextAt !== null && sub.nextAt > Date.now(), 'a retry is scheduled');
    assert.match(sub.lastError ?? '', /no answer/);
  });
});
