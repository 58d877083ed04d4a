// Dialog behaviour against raw device sockets: missing To-tag, 2xx retransmission → re-ACK,
// and the UAS side retransmitting its 2xx until ACK (RFC 3261 §13.3.1.4) under a FakeClock.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { FakeClock } from '../src/clock.ts';
import type { Dialog } from '../src/dialog/dialog.ts';
import { rawRequest, rawUdp, startStack } from './support/stack-fixtures.ts';

/** Turns a received request into the text of a response (Via/From/To/Call-ID/CSeq copied). */
function answer(request: string, status: string, extra: string[] = [], toTag?: string): string {
  const head = request.split('\r\n\r\n')[0]!.split('\r\n');
  const keep = head.filter((l) => /^(Via|From|To|Call-ID|CSeq):/i.test(l)).map((l) => (toTag !== undefined && /^To:/i.test(l) ? `${l};tag=${toTag}` : l));
  return [`SIP/2.0 ${status}`, ...keep, ...extra, 'Content-Length: 0', '', ''].join('\r\n');
}

describe('GB28181 device quirks', () => {
  it('accepts a 200 without To-tag, ACKs it, re-ACKs its retransmission, and matches the device BYE', async () => {
    const platform = await startStack();
    const dev = await rawUdp();
    try {
      const pending = platform.createUAC({ uri: `sip:34020000001320000001@127.0.0.1:${dev.port}`, headers: { From: '<sip:34020000002000000001@3402000000>' }, body: 'v=0\r\n' });
      const invite = await dev.next();
      assert.match(invite, /^INVITE /);
      // Ellean-style answer: no To-tag, Contact pointing back at the platform.
      const ok = answer(invite, '200 OK', [`Contact: <sip:34020000001320000001@127.0.0.1:${dev.port}>`]);
      await dev.send(ok, platform.port);
      const { dialog } = await pending;
      assert.equal(dialog.remoteTag, '');
      const ack1 = await dev.nextMatching(/^ACK /);
      assert.match(ack1, /^ACK sip:34020000001320000001@127\.0\.0\.1:\d+ SIP\/2\.0\r\n/);
      assert.match(ack1, /\r\nTo: <sip:34020000001320000001@127\.0\.0\.1:\d+>\r\n/);
      await dev.send(ok, platform.port); // the device did not see our ACK: same 2xx again
      assert.equal(await dev.nextMatching(/^ACK /), ack1, 'the very same ACK is re-sent (§13.2.2.4)');

      const localTag = /From: .*;tag=([^;\r\n]+)/.exec(invite)?.[1] ?? '';
      const callId = /Call-ID: (.*)\r\n/.exec(invite)?.[1] ?? '';
      const ended = once(dialog, 'terminated');
      await dev.send(
        rawRequest({ method: 'BYE', port: platform.port, viaPort: dev.port, callId, cseq: 9 }).replace(
          'To: <sip:34020000002000000001@3402000000>',
          `To: <sip:34020000002000000001@3402000000>;tag=${localTag}`,
        ),
        platform.port,
      );
      await dev.nextMatching(/^SIP\/2\.0 200 OK/);
      assert.deepEqual(await ended, ['bye']);
    } finally {
      dev.close();
      await platform.close();
    }
  });

  it('UAS retransmits its 2xx T1, 2T1 … capped at T2 until 64*T1, then BYEs the dialog', async () => {
    const clock = new FakeClock();
    const device = await startStack({ clock, timers: {} }); // T1 500, T2 4000 on the fake clock
    const platform = await rawUdp();
    try {
      const accepted = new Promise<Dialog>((resolve) =>
        device.onRequest('INVITE', (_req, ctx) => resolve(ctx.accept({ body: 'v=0\r\n' }))),
      );
      await platform.send(rawRequest({ method: 'INVITE', port: device.port, viaPort: platform.port, body: 'v=0\r\n' }), device.port);
      const dialog = await accepted;
      const ended = once(dialog, 'terminated');
      const okAt: number[] = [];
      okAt.push(clock.now());
      assert.match(await platform.next(), /^SIP\/2\.0 200 OK/);
      // Retransmissions at 500, 1500, 3500, 7500, 11500, … 31500 (interval 500, 1000, 2000, 4000, 4000 …).
      for (let i = 0; i < 10; i++) {
        clock.runNext();
        assert.match(await platform.next(), /^SIP\/2\.0 200 OK/);
        okAt.push(clock.now());
      }
      assert.deepEqual(okAt, [0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
      clock.runNext(); // 32000 = 64*T1: give up, BYE
      assert.equal(clock.now(), 32_000);
      assert.match(await platform.next(), /^BYE sip:/);
      assert.deepEqual(await ended, ['ack-timeout']);
      await assert.rejects(platform.next(100));
    } finally {
      platform.close();
      await device.close();
    }
  });

  it('ACK stops the 2xx retransmissions', async () => {
    const clock = new FakeClock();
    const device = await startStack({ clock, timers: {} });
    const platform = await rawUdp();
    try {
      const accepted = new Promise<Dialog>((resolve) =>
        device.onRequest('INVITE', (_req, ctx) => resolve(ctx.accept())),
      );
      const invite = rawRequest({ method: 'INVITE', port: device.port, viaPort: platform.port, callId: 'ack-stop' });
      await platform.send(invite, device.port);
      const dialog = await accepted;
      const ok = await platform.next();
      const toTag = /To: .*;tag=([^;\r\n]+)/.exec(ok)?.[1] ?? '';
      const acked = once(dialog, 'ack');
      await platform.send(
        rawRequest({ method: 'ACK', port: device.port, viaPort: platform.port, callId: 'ack-stop' }).replace(
          'To: <sip:34020000002000000001@3402000000>',
          `To: <sip:34020000002000000001@3402000000>;tag=${toTag}`,
        ),
        device.port,
      );
      await acked;
      clock.advance(40_000);
      await assert.rejects(platform.next(150), /no datagram/);
      assert.equal(dialog.terminated, false);
    } finally {
      platform.close();
      await device.close();
    }
  });
});
