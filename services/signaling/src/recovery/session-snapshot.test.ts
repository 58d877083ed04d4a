import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sampleSnapshot } from '../../test/recovery/snapshot-samples.ts';
import { MAX_SAVED_VIEWERS, parseSnapshot, serializeSnapshot, SnapshotFormatError, type SessionSnapshot } from './session-snapshot.ts';

/** Every field with a value a parser could get wrong: a display name with quotes, a route set, real times. */
const SAMPLE: SessionSnapshot = sampleSnapshot('a84b4c76e66710@127.0.0.1', {
  streamId: '34020000001320000001_34020000001310000001',
  dialog: {
    callId: 'a84b4c76e66710@127.0.0.1',
    localTag: '1928301774',
    remoteTag: '',
    local: '<sip:34020000002000000001@3402000000>',
    remote: '"Cam 1" <sip:34020000001310000001@3402000000>',
    localSeq: 1,
    remoteSeq: null,
    routeSet: ['<sip:10.0.0.1;lr>'],
    remoteTarget: 'sip:34020000001310000001@127.0.0.1:5062',
    transport: 'udp',
    remoteAddress: '127.0.0.1',
    remotePort: 5062,
  },
  sessionIds: ['s1', 's2'],
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_120_000,
});

describe('session snapshot', () => {
  it('round-trips every field (dialog state, media, viewers)', () => {
    assert.deepEqual(parseSnapshot(serializeSnapshot(SAMPLE)), SAMPLE);
    const history: SessionSnapshot = { ...SAMPLE, purpose: 'download', range: { start: 1, end: 2 }, speed: 4, dialog: { ...SAMPLE.dialog, remoteTag: 'x', remoteSeq: 7, localSeq: 3 } };
    assert.deepEqual(parseSnapshot(serializeSnapshot(history)), history);
  });

  it('keeps at most MAX_SAVED_VIEWERS viewer ids', () => {
    const many = { ...SAMPLE, sessionIds: Array.from({ length: MAX_SAVED_VIEWERS + 5 }, (_, i) => `s${i}`) };
    assert.equal(parseSnapshot(serializeSnapshot(many)).sessionIds.length, MAX_SAVED_VIEWERS);
  });

  const bad: [string, unknown, string][] = [
    ['not JSON', '{', 'snapshot'],
    ['an array', [], 'snapshot'],
    ['another version', { ...SAMPLE, v: 2 }, 'v'],
    ['an unknown purpose', { ...SAMPLE, purpose: 'talk' }, 'purpose'],
    ['a short SSRC', { ...SAMPLE, ssrc: '12345' }, 'ssrc'],
    ['a port out of range', { ...SAMPLE, rtpPort: 70_000 }, 'rtpPort'],
    ['a CSeq of 2^31', { ...SAMPLE, dialog: { ...SAMPLE.dialog, localSeq: 2 ** 31 } }, 'dialog.localSeq'],
    ['a Call-ID with a space', { ...SAMPLE, dialog: { ...SAMPLE.dialog, callId: 'a b' } }, 'dialog.callId'],
    ['a CR in a name-addr', { ...SAMPLE, dialog: { ...SAMPLE.dialog, remote: '<sip:x>\r\nVia: evil' } }, 'dialog.remote'],
    ['a huge route set', { ...SAMPLE, dialog: { ...SAMPLE.dialog, routeSet: Array(17).fill('<sip:a;lr>') } }, 'dialog.routeSet'],
    ['no dialog', { ...SAMPLE, dialog: null }, 'dialog'],
    ['a viewer id that is a number', { ...SAMPLE, sessionIds: [1] }, 'sessionIds[0]'],
    ['a zero speed', { ...SAMPLE, speed: 0 }, 'speed'],
  ];
  for (const [what, value, field] of bad) {
    it(`refuses ${what}, naming ${field}`, () => {
      const input = typeof value === 'string' ? value : JSON.stringify(value);
      assert.throws(() => parseSnapshot(input), (e: unknown) => e instanceof SnapshotFormatError && e.field === field);
    });
  }

  it('refuses an oversized input before parsing it', () => {
    assert.throws(() => parseSnapshot(`"${'x'.repeat(70_000)}"`), (e: unknown) => e instanceof SnapshotFormatError && e.field === 'snapshot');
  });
});
