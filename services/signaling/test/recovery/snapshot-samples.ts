// One live-view session snapshot for the recovery unit tests (parse/serialize, the stores, the scan):
// each test overrides only the fields it is about.
import type { SessionSnapshot } from '../../src/recovery/session-snapshot.ts';

export const SAMPLE_DEVICE = '34020000001320000001';

/** A live session of SAMPLE_DEVICE's first channel on media node zlm-1, held by node-a, dialog `callId`. */
export function sampleSnapshot(callId: string, over: Partial<SessionSnapshot> = {}): SessionSnapshot {
  return {
    v: 1,
    holder: 'node-a',
    run: 'r1',
    streamId: `${SAMPLE_DEVICE}_${callId}`,
    purpose: 'live',
    deviceId: SAMPLE_DEVICE,
    channelId: '34020000001310000001',
    nodeId: 'zlm-1',
    ssrc: '0200000001',
    allocatedSsrc: '0200000001',
    mode: 'udp',
    rtpPort: 30_000,
    dialog: {
      callId,
      localTag: 't1',
      remoteTag: 't2',
      local: '<sip:34020000002000000001@3402000000>',
      remote: '<sip:34020000001310000001@3402000000>',
      localSeq: 1,
      remoteSeq: null,
      routeSet: [],
      remoteTarget: 'sip:34020000001310000001@127.0.0.1:5062',
      transport: 'udp',
      remoteAddress: '127.0.0.1',
      remotePort: 5062,
    },
    sessionIds: ['s1'],
    createdAt: 1,
    expiresAt: 2,
    range: null,
    speed: 1,
    ...over,
  };
}
