// INVITE dialogs end to end on 127.0.0.1: 2xx + ACK, in-dialog INFO, BYE, over UDP and TCP.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { Dialog, DialogTerminationReason } from '../src/dialog/dialog.ts';
import type { SipRequest } from '../src/message/types.ts';
import { SipRejectedError } from '../src/errors.ts';
import { startStack } from './support/stack-fixtures.ts';

const SDP = 'v=0\r\no=34020000002000000001 0 0 IN IP4 127.0.0.1\r\ns=Play\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 30000 RTP/AVP 96\r\na=recvonly\r\na=rtpmap:96 PS/90000\r\ny=0100000001\r\n';

for (const transport of ['udp', 'tcp'] as const) {
  describe(`INVITE dialog over ${transport.toUpperCase()}`, () => {
    it('INVITE → 200 + ACK, INFO in dialog with CSeq + 1, BYE from the device ends both sides', async () => {
      const platform = await startStack();
      const device = await startStack();
      try {
        let uas: Dialog | undefined;
        let inviteSeen: SipRequest | undefined;
        const acked = new Promise<SipRequest>((resolve) => {
          device.onRequest('INVITE', (req, ctx) => {
            inviteSeen = req;
            uas = ctx.accept({ body: SDP.replace('recvonly', 'sendonly'), contentType: 'application/sdp' });
            uas.once('ack', resolve);
          });
        });
        const { dialog, response } = await platform.createUAC({
          uri: `sip:34020000001320000001@127.0.0.1:${device.port}`,
          headers: { From: '<sip:34020000002000000001@3402000000>', To: '<sip:34020000001320000001@3402000000>', Subject: '34020000001320000001:0100000001,34020000002000000001:0' },
          body: SDP,
          contentType: 'APPLICATION/SDP',
          target: { host: '127.0.0.1', port: device.port, transport },
        });
        assert.equal(response.status, 200);
        assert.match(response.body.toString(), /a=sendonly/);
        const ack = await acked;
        assert.equal(ack.headers.get('CSeq'), `${/^(\d+)/.exec(inviteSeen?.headers.get('CSeq') ?? '')?.[1]} ACK`);
        assert.notEqual(/branch=([^;]+)/.exec(ack.headers.get('Via') ?? '')?.[1], /branch=([^;]+)/.exec(inviteSeen?.headers.get('Via') ?? '')?.[1], '2xx ACK is a new transaction');
        assert.ok(uas !== undefined);
        assert.equal(dialog.callId, uas.callId);
        assert.equal(dialog.localTag, uas.remoteTag);
        assert.equal(dialog.remoteTag, uas.localTag);
        assert.equal(inviteSeen?.headers.get('Contact'), `<sip:34020000002000000001@127.0.0.1:${platform.port}${transport === 'tcp' ? ';transport=tcp' : ''}>`);

        // MANSRTSP over INFO (playback control), answered by the listener.
        const infoSeen = new Promise<SipRequest>((resolve) =>
          uas?.on('info', (req, ctx) => {
            ctx.reply(200);
            resolve(req);
          }),
        );
        const infoRes = await dialog.request('INFO', { body: 'PAUSE RTSP/1.0\r\nCSeq: 1\r\nPauseTime: now\r\n', contentType: 'Application/MANSRTSP' });
        assert.equal(infoRes.status, 200);
        assert.equal((await infoSeen).headers.get('CSeq'), '2 INFO');
        assert.equal(dialog.localSeq, 2);

        const ended = once(dialog, 'terminated') as Promise<[DialogTerminationReason]>;
        const byeSeen = once(dialog, 'bye');
        const byeRes = await uas.request('BYE');
        assert.equal(byeRes.status, 200);
        await byeSeen;
        assert.deepEqual(await ended, ['bye']);
        assert.equal(uas.terminated, true);
        assert.equal(platform.stats().dialogs + device.stats().dialogs, 0);
        await assert.rejects(dialog.request('INFO'), (e: unknown) => (e as { code?: string }).code === 'SIP_ERR_DIALOG_TERMINATED');
      } finally {
        await platform.close();
        await device.close();
      }
    });
  });
}

describe('INVITE outcomes', () => {
  it('non-2xx final rejects with SipRejectedError carrying the response; the transaction ACKed it', async () => {
    const platform = await startStack();
    const device = await startStack();
    try {
      device.onRequest('INVITE', (_req, ctx) => ctx.reply(486));
      const err = await platform.createUAC({ uri: `sip:dev@127.0.0.1:${device.port}`, body: SDP }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof SipRejectedError);
      assert.equal(err.response.status, 486);
      // The device's INVITE server transaction left Completed on the ACK (Timer I = T4 = 500 ms here).
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(device.stats().serverTransactions, 0);
    } finally {
      await platform.close();
      await device.close();
    }
  });

  it('destroy() sends BYE from the caller side; the callee sees bye + terminated', async () => {
    const platform = await startStack();
    const device = await startStack();
    try {
      const uasReady = new Promise<Dialog>((resolve) => device.onRequest('INVITE', (_req, ctx) => resolve(ctx.accept({ body: SDP }))));
      const { dialog } = await platform.createUAC({ uri: `sip:dev@127.0.0.1:${device.port}`, body: SDP });
      const uas = await uasReady;
      const ended = once(uas, 'terminated');
      await dialog.destroy();
      assert.deepEqual(await ended, ['bye']);
      assert.equal(dialog.terminated, true);
      await dialog.destroy(); // idempotent
    } finally {
      await platform.close();
      await device.close();
    }
  });
});
