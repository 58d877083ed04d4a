// Interop (GB/T 28181-2016 §9.11) with a SIPp device built from capture 13 (the 445990772 device's
// answer: Event presence, no Expires, a body without declaration) and sample 15's MobilePosition body:
// the platform takes the odd 200 as an active subscription, takes the device's NOTIFY in that dialog
// and stores the position it carries.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { runDevice, startInstance, type Instance } from './signaling-fixture.ts';

const DEV = '34020000001320000801';

interface Position {
  longitude: string;
  latitude: string;
  speed: string | null;
  direction: string | null;
}

describe('subscription to a SIPp device (capture 13 answer)', () => {
  let instance: Instance;
  before(async () => {
    instance = await startInstance();
  });
  after(async () => {
    await instance.stop();
  });

  it('subscribes, the device NOTIFYs a position in the dialog, the position is stored', async () => {
    const run = await runDevice({ instance, deviceId: DEV, ooc: 'subscribe/position-subscribe-ooc.xml', keepaliveMs: 500 });
    try {
      await waitFor(async () => (await instance.api<{ online: boolean } | null>('GET', `/vms/devices/${DEV}`)).data?.online === true, {
        timeoutMs: 10_000,
        intervalMs: 100,
        description: 'SIPp device registered',
      });
      const on = await instance.api<{ subscriptions: { kind: string; state: string }[] }>('POST', `/vms/device/subscriptions?deviceId=${DEV}&kind=mobileposition&enabled=true&interval=2`);
      assert.equal(on.success, true, JSON.stringify(on));
      assert.equal(on.data.subscriptions[0]?.state, 'active');
      const latest = await waitFor(async () => (await instance.api<Position | null>('GET', `/vms/positions/latest?deviceId=${DEV}`)).data, {
        timeoutMs: 5000,
        intervalMs: 100,
        description: 'the position from the NOTIFY stored',
      });
      assert.deepEqual([latest.longitude, latest.latitude, latest.speed, latest.direction], ['121.473701', '31.230416', '36.5', '270']);
      const result = await Promise.race([run.done, new Promise<null>((r) => setTimeout(() => r(null), 15_000))]);
      assert.ok(result !== null, 'the out-of-call scenario completed');
      assert.doesNotMatch(result.errors, /Failed regexp match|Aborting call/, result.errors);
      assert.match(result.messages, /SUBSCRIBE sip:34020000001320000801@/);
      assert.match(result.messages, /Event: presence/);
      // in our dialog: To carries the platform's tag from its SUBSCRIBE
      const notify = /NOTIFY sip:[^\n]*\n[\s\S]*?\n\s*\n/.exec(result.messages)?.[0] ?? '';
      assert.match(notify, /To: *<sip:34020000002000000001@[^>]+>;tag=\S+/, notify);
    } finally {
      await run.stop().catch(() => undefined);
    }
  });
});
