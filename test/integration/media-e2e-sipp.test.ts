// Interop with SIPp as the device (test/sipp/invite/gb-device-invite-ooc.xml): it registers with
// digest, answers the catalog query, then answers the live INVITE with a GB28181 SDP that puts its
// device id in y= (not an SSRC) and sends no RTP. The platform must accept the answer, ACK, keep its
// own SSRC, hand out URLs, and BYE on stop; SIPp checks Request-URI, Subject and the offer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, type SippResult } from '@vms/harness';
import { call, startSingleStack, syncChannels, type SingleStack, type StartAnswer } from './media-e2e-fixture.ts';
import { runDevice, waitOnline } from './signaling-fixture.ts';

const DEVICE = '34020000001320000555';
const CHANNEL = '34020000001310000555';

describe('SIPp device answering INVITE with y=<device id>', () => {
  let stack: SingleStack;
  before(async () => {
    stack = await startSingleStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it('play → INVITE checked by SIPp → 200 with y=device id accepted → URLs; stop → BYE answered; SIPp ends clean', async () => {
    const run = await runDevice({ instance: stack.instance, deviceId: DEVICE, ooc: 'invite/gb-device-invite-ooc.xml', keys: { device: DEVICE, channel: CHANNEL }, keepaliveMs: 500 });
    try {
      await waitOnline(stack.instance, DEVICE);
      await syncChannels(stack.instance, DEVICE, 1);
      const play = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${CHANNEL}`)).data;
      assert.match(play.ssrc, /^0\d{9}$/, 'our SSRC kept although the device answered its id in y=');
      assert.ok(play.urls.flv?.endsWith(`/rtp/${play.streamId}.live.flv`));
      await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${play.sessionId}`);
    } catch (err) {
      await run.stop();
      throw err;
    }
    const ended = await Promise.race([run.done, sleep(15_000).then(() => null)]);
    const result: SippResult = ended ?? (await run.stop());
    assert.doesNotMatch(result.errors, /Failed regexp match|Aborting call/, result.errors);
    assert.ok(ended !== null, `SIPp never saw the BYE\n${result.errors}`);
    assert.equal(result.ok, true, `SIPp exit ${result.exitCode}: ${result.output}\n${result.errors}`);
    assert.match(result.messages, /INVITE sip:34020000001310000555@127\.0\.0\.1:\d+ SIP\/2\.0/);
    assert.match(result.messages, /ACK sip:34020000001310000555@127\.0\.0\.1:\d+ SIP\/2\.0/);
    assert.match(result.messages, /BYE sip:34020000001310000555@/);
  });
});
