// MANSRTSP (Annex B) bodies for INFO; expected texts written by hand.
import assert from 'node:assert/strict';
import {
  buildMansrtsp,
  buildMansrtspPause,
  buildMansrtspResume,
  buildMansrtspSeek,
  buildMansrtspSpeed,
  buildMansrtspTeardown,
  parseMansrtsp,
} from '../src/index.ts';
import { sample, test, throwsGb } from './support.ts';

test('pause, resume, seek, speed, teardown bodies', () => {
  assert.equal(buildMansrtspPause(1), 'PAUSE RTSP/1.0\r\nCSeq: 1\r\nPauseTime: now\r\n');
  assert.equal(buildMansrtspResume(2), 'PLAY RTSP/1.0\r\nCSeq: 2\r\nRange: npt=now-\r\n');
  assert.equal(buildMansrtspSeek(3, 120), 'PLAY RTSP/1.0\r\nCSeq: 3\r\nRange: npt=120-\r\n');
  assert.equal(buildMansrtspSeek(3, 1.5), 'PLAY RTSP/1.0\r\nCSeq: 3\r\nRange: npt=1.5-\r\n');
  assert.equal(buildMansrtspSpeed(4, 2), 'PLAY RTSP/1.0\r\nCSeq: 4\r\nScale: 2.0\r\n');
  assert.equal(buildMansrtspSpeed(5, 0.5), 'PLAY RTSP/1.0\r\nCSeq: 5\r\nScale: 0.5\r\n');
  assert.equal(buildMansrtspTeardown(6), 'TEARDOWN RTSP/1.0\r\nCSeq: 6\r\n');
});

test('the SPVMN PlaybackControl_Play template parses (sample 14)', () => {
  assert.deepEqual(parseMansrtsp(sample('14', 17).body), { method: 'PLAY', cseq: 2, range: { start: 'now' } });
});

test('parse: LF line ends, header case, ranges with an end, unknown headers kept', () => {
  assert.deepEqual(parseMansrtsp('PLAY RTSP/1.0\ncseq: 7\nscale: 4.000000\nrange: npt=10-20.25\nX-Foo: bar\n\n'), {
    method: 'PLAY',
    cseq: 7,
    scale: 4,
    range: { start: 10, end: 20.25 },
    headers: { 'X-Foo': 'bar' },
  });
  assert.deepEqual(parseMansrtsp(Buffer.from(buildMansrtspPause(9))), { method: 'PAUSE', cseq: 9, pauseTime: 'now' });
  const req = { method: 'PLAY', cseq: 8, scale: 0.25, range: { start: 30 } };
  assert.deepEqual(parseMansrtsp(buildMansrtsp(req)), req);
});

test('malformed bodies are refused with GB_ERR_RTSP', () => {
  throwsGb(() => parseMansrtsp(''), 'GB_ERR_RTSP');
  throwsGb(() => parseMansrtsp('PLAY RTSP/2.0\r\nCSeq: 1\r\n'), 'GB_ERR_RTSP');
  throwsGb(() => parseMansrtsp('PLAY RTSP/1.0\r\n'), 'GB_ERR_RTSP'); // no CSeq
  throwsGb(() => parseMansrtsp('PLAY RTSP/1.0\r\nCSeq: x\r\n'), 'GB_ERR_RTSP');
  throwsGb(() => parseMansrtsp('PLAY RTSP/1.0\r\nCSeq: 1\r\nScale: fast\r\n'), 'GB_ERR_RTSP');
  throwsGb(() => parseMansrtsp('PLAY RTSP/1.0\r\nCSeq: 1\r\nRange: clock=20240101T000000Z-\r\n'), 'GB_ERR_RTSP');
  throwsGb(() => parseMansrtsp('PLAY RTSP/1.0\r\nCSeq: 1\r\nno colon here\r\n'), 'GB_ERR_RTSP');
  throwsGb(() => parseMansrtsp(`PLAY RTSP/1.0\r\n${'X: y\r\n'.repeat(1000)}`), 'GB_ERR_TOO_LARGE');
  throwsGb(() => buildMansrtspSpeed(1, 0), 'GB_ERR_ARGUMENT');
  throwsGb(() => buildMansrtspSeek(1, -5), 'GB_ERR_ARGUMENT');
});
