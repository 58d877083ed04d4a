// Playback and download end to end on one instance (GB/T 28181-2016 §9.8, §9.9, Annex B): the INVITE
// (s=Playback / Download, u=, t=, a=downloadspeed, Subject), MANSRTSP INFO bodies checked byte by
// byte against hand-written text, and MediaStatus 121 (end of file, a MESSAGE outside the dialog
// with the INVITE's Call-ID) ending the session with a BYE.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { call, recordSipRequests, startSimDevice, startSingleStack, type SingleStack, type StartAnswer } from './media-e2e-fixture.ts';
import { SERVER_ID } from './signaling-fixture.ts';

const IPC = '34020000001320000077';
let stack: SingleStack;
let ipc: SimulatedDevice;
let channel: string;
const invites = recordSipRequests('INVITE');
const infos = recordSipRequests('INFO');

before(async () => {
  stack = await startSingleStack();
  ipc = await startSimDevice(stack.instance, IPC, { channels: 1 });
  channel = ipc.channelIds[0] as string;
});

after(async () => {
  invites.stop();
  infos.stop();
  await ipc?.close();
  await stack?.stop();
});

// 2026-11-30 08:00:00 .. 09:00:00 at UTC+8 (the instance's zone is the test host's; ISO with offset is unambiguous)
const START = '2026-11-30T08:00:00+08:00';
const END = '2026-11-30T09:00:00+08:00';
const START_EPOCH = Date.parse(START) / 1000;
const END_EPOCH = Date.parse(END) / 1000;
const q = (s: string): string => encodeURIComponent(s);

describe('playback and download', () => {
  it('playback INVITE carries s=Playback, u=, t= and the Subject; pause / seek / speed go out as exactly these MANSRTSP bodies', async () => {
    const pb = (await call<StartAnswer>(stack.instance, 'POST', `/vms/playback/start?channelId=${channel}&startTime=${q(START)}&endTime=${q(END)}`)).data;
    assert.match(pb.ssrc, /^1\d{9}$/, 'history SSRC starts with 1');
    const invite = invites.requests.at(-1);
    assert.ok(invite !== undefined);
    assert.equal(invite.headers.get('Subject'), `${channel}:${pb.ssrc},${SERVER_ID}:0`);
    const sdp = invite.body.toString('latin1');
    assert.match(sdp, /\r\ns=Playback\r\n/);
    assert.ok(sdp.includes(`\r\nu=${channel}:0\r\n`), sdp);
    assert.ok(sdp.includes(`\r\nt=${START_EPOCH} ${END_EPOCH}\r\n`), sdp);
    assert.ok(sdp.includes(`\r\ny=${pb.ssrc}\r\n`), sdp);
    await waitFor(() => (stack.zlm.stats(pb.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 5000, description: 'playback RTP' });

    const sent: string[] = [];
    for (const [action, value] of [['pause', ''], ['resume', ''], ['seek', '600'], ['speed', '2'], ['speed', '0.5']] as const) {
      const r = await call<{ cseq: number }>(stack.instance, 'POST', `/vms/playback/control?sessionId=${pb.sessionId}&action=${action}${value === '' ? '' : `&value=${value}`}`);
      sent.push(String(r.data.cseq));
    }
    assert.deepEqual(sent, ['1', '2', '3', '4', '5']);
    const bodies = infos.requests.filter((r) => r.headers.get('Call-ID') === invite.headers.get('Call-ID'));
    assert.deepEqual(
      bodies.map((r) => r.body.toString('latin1')),
      [
        'PAUSE RTSP/1.0\r\nCSeq: 1\r\nPauseTime: now\r\n',
        'PLAY RTSP/1.0\r\nCSeq: 2\r\nRange: npt=now-\r\n',
        'PLAY RTSP/1.0\r\nCSeq: 3\r\nRange: npt=600-\r\n',
        'PLAY RTSP/1.0\r\nCSeq: 4\r\nScale: 2.0\r\n',
        'PLAY RTSP/1.0\r\nCSeq: 5\r\nScale: 0.5\r\n',
      ],
    );
    assert.ok(bodies.every((r) => r.headers.get('Content-Type') === 'Application/MANSRTSP'));
    const dev = ipc.sessions.find((s) => s.kind === 'Playback' && s.ssrc === Number(pb.ssrc));
    assert.equal(dev?.scale, 0.5, 'the device applied the last Scale');

    const bad = await call(stack.instance, 'POST', `/vms/playback/control?sessionId=${pb.sessionId}&action=speed&value=3`, true);
    assert.equal(bad.code, 400);
    await call(stack.instance, 'POST', `/vms/playback/stop?sessionId=${pb.sessionId}`);
    await waitFor(() => dev?.state === 'closed', { timeoutMs: 5000, description: 'BYE at the device' });
  });

  it('end of file: MediaStatus 121 ends the playback session (BYE, RTP server closed, session gone)', async () => {
    // a 2-second range: the device sends it in ~2 s, then MediaStatus 121 with the INVITE's Call-ID
    const s = '2026-11-30T08:00:00+08:00';
    const e = '2026-11-30T08:00:02+08:00';
    const pb = (await call<StartAnswer>(stack.instance, 'POST', `/vms/playback/start?channelId=${channel}&startTime=${q(s)}&endTime=${q(e)}`)).data;
    const dev = ipc.sessions.find((x) => x.kind === 'Playback' && x.ssrc === Number(pb.ssrc));
    assert.ok(dev !== undefined);
    const eof = new Promise<void>((resolve) => ipc.once('media-status', () => resolve()));
    await eof;
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE after MediaStatus 121' });
    await waitFor(() => stack.zlm.stats(pb.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed' });
    const stop = await call(stack.instance, 'POST', `/vms/playback/stop?sessionId=${pb.sessionId}`, true);
    assert.equal(stop.code, 404);
  });

  it('a device that never answers INFO: 4606 within the default INFO deadline, then BYE, RTP server closed, session gone', async () => {
    const pb = (await call<StartAnswer>(stack.instance, 'POST', `/vms/playback/start?channelId=${channel}&startTime=${q(START)}&endTime=${q(END)}`)).data;
    const dev = ipc.sessions.find((x) => x.kind === 'Playback' && x.ssrc === Number(pb.ssrc));
    assert.ok(dev !== undefined);
    dev.answersInfo = false;
    const t0 = performance.now();
    const r = await call(stack.instance, 'POST', `/vms/playback/control?sessionId=${pb.sessionId}&action=pause`, true);
    const waited = performance.now() - t0;
    assert.equal(r.code, 4606, JSON.stringify(r));
    assert.equal(dev.infos.length, 1, 'the INFO reached the device');
    // the default deadline (8 s), well before Timer F (32 s) and the forward read timeout of this route (12 s)
    assert.ok(waited >= 7500 && waited < 11_000, `answered after ${Math.round(waited)} ms`);
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE at the device' });
    await waitFor(() => stack.zlm.stats(pb.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed' });
    const again = await call(stack.instance, 'POST', `/vms/playback/control?sessionId=${pb.sessionId}&action=resume`, true);
    assert.equal(again.code, 404, 'no dialog left behind');
  });

  it('download: s=Download with a=downloadspeed; progress reaches 1 at end of file', async () => {
    const s = '2026-11-30T08:00:00+08:00';
    const e = '2026-11-30T08:00:08+08:00';
    const dl = (await call<StartAnswer>(stack.instance, 'POST', `/vms/download/start?channelId=${channel}&startTime=${q(s)}&endTime=${q(e)}&speed=4`)).data;
    const sdp = invites.requests.at(-1)?.body.toString('latin1') ?? '';
    assert.match(sdp, /\r\ns=Download\r\n/);
    assert.ok(sdp.includes('\r\na=downloadspeed:4\r\n'), sdp);
    const early = await call<{ progress: number; endOfFile: boolean }>(stack.instance, 'GET', `/vms/download/progress?sessionId=${dl.sessionId}`);
    assert.equal(early.data.endOfFile, false);
    const done = await waitFor(
      async () => {
        const p = await call<{ progress: number; endOfFile: boolean }>(stack.instance, 'GET', `/vms/download/progress?sessionId=${dl.sessionId}`);
        return p.data.endOfFile ? p.data : null;
      },
      { timeoutMs: 10_000, intervalMs: 100, description: 'download end of file' },
    );
    assert.equal(done.progress, 1);
    await call(stack.instance, 'POST', `/vms/download/stop?sessionId=${dl.sessionId}`);
    const gone = await call(stack.instance, 'GET', `/vms/download/progress?sessionId=${dl.sessionId}`, true);
    assert.equal(gone.code, 404);
  });
});
