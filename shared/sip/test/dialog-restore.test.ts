// A dialog rebuilt from its saved RFC 3261 §12 state on another stack (SPEC RECOVER: the instance that set it
// up crashed): the BYE it sends carries the saved Call-ID, tags and the next local CSeq, so the peer matches
// it to the dialog it still holds and ends that one.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialog, DialogTerminationReason } from '../src/dialog/dialog.ts';
import type { SipRequest } from '../src/message/types.ts';
import { startStack } from './support/stack-fixtures.ts';

const SDP = 'v=0\r\no=34020000002000000001 0 0 IN IP4 127.0.0.1\r\ns=Play\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 30000 RTP/AVP 96\r\na=recvonly\r\na=rtpmap:96 PS/90000\r\ny=0100000001\r\n';

/**
 * An upstream (UAC) set up a dialog with the first stack (UAS), which then crashed: the second stack is
 * left with the saved state and the upstream's flow to rebuild the UAS side from.
 */
async function uasDialogAfterCrash() {
  const first = await startStack();
  const second = await startStack();
  const upstream = await startStack();
  let uas: Dialog | undefined;
  first.onRequest('INVITE', (_req, ctx) => {
    uas = ctx.accept({ body: SDP.replace('recvonly', 'sendonly'), contentType: 'application/sdp' });
  });
  const { dialog: up } = await upstream.createUAC({
    uri: `sip:34020000001320000001@127.0.0.1:${first.port}`,
    headers: { From: '<sip:34010000002000000001@3401000000>', To: '<sip:34020000001320000001@3402000000>' },
    body: SDP,
    contentType: 'APPLICATION/SDP',
    target: { host: '127.0.0.1', port: first.port, transport: 'udp' },
  });
  assert.ok(uas !== undefined);
  await sleep(50); // the ACK reached the first stack
  const saved = uas.snapshot;
  await first.close(); // the crash
  const flow = { transport: 'udp' as const, remoteAddress: '127.0.0.1', remotePort: upstream.port, localAddress: '127.0.0.1', localPort: second.port };
  return { second, upstream, up, saved, flow, close: () => Promise.all([first.close(), second.close(), upstream.close()]) };
}

describe('restoreDialog', () => {
  it('a second stack BYEs a dialog the first one set up: same Call-ID and tags, CSeq + 1; the peer ends it', async () => {
    const first = await startStack();
    const second = await startStack();
    const device = await startStack();
    try {
      let uas: Dialog | undefined;
      device.onRequest('INVITE', (_req, ctx) => {
        uas = ctx.accept({ body: SDP.replace('recvonly', 'sendonly'), contentType: 'application/sdp' });
      });
      const { dialog } = await first.createUAC({
        uri: `sip:34020000001320000001@127.0.0.1:${device.port}`,
        headers: { From: '<sip:34020000002000000001@3402000000>', To: '<sip:34020000001320000001@3402000000>' },
        body: SDP,
        contentType: 'APPLICATION/SDP',
        target: { host: '127.0.0.1', port: device.port, transport: 'udp' },
      });
      assert.ok(uas !== undefined);
      const saved = dialog.snapshot;
      await first.close(); // the crash: no BYE from the first stack

      const byeSeen = new Promise<SipRequest>((resolve) => uas?.once('bye', (req: SipRequest) => resolve(req)));
      const ended = once(uas, 'terminated') as Promise<[DialogTerminationReason]>;
      const flow = { transport: 'udp' as const, remoteAddress: '127.0.0.1', remotePort: device.port, localAddress: '127.0.0.1', localPort: second.port };
      const restored = second.restoreDialog(saved, flow);
      assert.equal(restored.callId, dialog.callId);
      const res = await restored.request('BYE');
      assert.equal(res.status, 200);
      const bye = await byeSeen;
      assert.equal(bye.headers.get('Call-ID'), dialog.callId);
      assert.equal(bye.headers.get('CSeq'), `${(saved.localSeq ?? 0) + 1} BYE`);
      assert.match(bye.headers.get('From') ?? '', new RegExp(`tag=${dialog.localTag}`));
      assert.match(bye.headers.get('To') ?? '', new RegExp(`tag=${dialog.remoteTag}`));
      assert.deepEqual(await ended, ['bye']);
      assert.equal(second.stats().dialogs, 0);
    } finally {
      await Promise.all([first.close(), second.close(), device.close()]);
    }
  });

  it('re-INVITE from the restored UAS side: a target refresh to the new stack (Contact, CSeq + 1), ACKed; the peer BYEs the new stack', async () => {
    const { second, up, saved, flow, close } = await uasDialogAfterCrash();
    try {
      const reinvites: SipRequest[] = [];
      up.on('request', (req, ctx) => {
        reinvites.push(req); // the stack follows the target refresh itself (RFC 3261 §12.2.2): no help here
        ctx.reply(200, { body: SDP, contentType: 'application/sdp' });
      });
      const restored = second.restoreDialog(saved, flow);
      const res = await restored.reinvite({ body: SDP.replace('recvonly', 'sendonly'), contentType: 'application/sdp' });
      assert.equal(res.status, 200, res.reason);
      const re = reinvites[0];
      assert.ok(re !== undefined);
      assert.equal(re.headers.get('Call-ID'), up.callId);
      assert.equal(re.headers.get('CSeq'), `${(saved.localSeq ?? 0) + 1} INVITE`, 'the UAS side had sent nothing: its first request');
      assert.match(re.headers.get('Contact') ?? '', new RegExp(`:${second.port}`));
      assert.equal(up.remoteTarget.port, second.port, 'the upstream refreshed its remote target');
      const ended = once(restored, 'terminated') as Promise<[DialogTerminationReason]>;
      const byeRes = await up.request('BYE');
      assert.equal(byeRes.status, 200, `${byeRes.reason} ${String(up.localSeq)} ${String(restored.remoteSeq)}`);
      assert.deepEqual(await ended, ['bye']);
    } finally {
      await close();
    }
  });

  it('a refused re-INVITE leaves the dialog as it was (RFC 3261 §14.1); its BYE still ends the peer\'s dialog', async () => {
    const { second, up, saved, flow, close } = await uasDialogAfterCrash();
    try {
      const restored = second.restoreDialog(saved, flow);
      const res = await restored.reinvite({ body: SDP, contentType: 'application/sdp' }); // no listener: 488
      assert.equal(res.status, 488);
      assert.equal(restored.terminated, false);
      const ended = once(up, 'terminated') as Promise<[DialogTerminationReason]>;
      assert.equal((await restored.request('BYE')).status, 200);
      assert.deepEqual(await ended, ['bye']);
    } finally {
      await close();
    }
  });
});
