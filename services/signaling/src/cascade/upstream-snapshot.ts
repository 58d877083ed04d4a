// What survives a cascade leader's crash of an upstream's live view (SPEC §11 RECOVER for CASC-6): the upstream's
// INVITE dialog as the leader accepted it (RFC 3261 §12 state, we are the UAS), the upstream's SDP offer (where
// it wants the RTP and with which y=), the viewer the leader holds on the channel's stream and the media node
// sending it. Enough for the next leader to re-send the stream and move the dialog to itself (re-INVITE, target
// refresh), or to BYE the upstream cleanly. Kept with the same store as the device dialogs' snapshots
// (atomic snapshot + per-instance index, tombstones), under its own key prefix.
// Pure: JSON in and out; parseUpstreamSnapshot checks every field (what Redis gives back is input).
import { parseDialog, type SavedDialog } from '../recovery/session-snapshot.ts';
import { failField, intField, parseBoundedObject, serializeBounded, tokenField } from '../recovery/snapshot-fields.ts';
import type { SnapshotCodec } from '../recovery/session-snapshots.port.ts';

/** The upstream's SDP offer as received (a GB28181 offer is a few hundred bytes). */
export const MAX_OFFER_BYTES = 4096;
const MAX_BYTES = 16 * 1024;
const GB_ID = /^\d{20}$/;
const TOKEN = /^[\x21\x23-\x7e]{1,256}$/;
const EPOCH_MAX = 8.64e15;

export interface UpstreamSnapshot {
  readonly v: 1;
  /** The leader that accepted (or last recovered) the dialog, and its process run. */
  readonly holder: string;
  readonly run: string;
  readonly expiresAt: number;
  readonly platformId: string;
  readonly channelId: string;
  readonly deviceId: string;
  readonly tenantId: string;
  readonly purpose: 'live' | 'playback' | 'download';
  /** The viewer held on the channel's stream (its play session) and where that stream is. */
  readonly viewer: { readonly sessionId: string; readonly streamId: string; readonly mediaNodeId: string };
  /** The upstream's INVITE body (UTF-8), read again with readUpstreamOffer on recovery. */
  readonly offerSdp: string;
  /** o= version of our last SDP to the upstream (0: the 200's answer). */
  readonly sdpVersion: number;
  readonly dialog: SavedDialog;
  readonly createdAt: number;
  /**
   * The view was ending (the upstream's BYE, a stream gone) when the snapshot was last written: a leader that
   * crashed during the teardown leaves it to the next one to finish (stop the sending, leave the stream), never
   * to re-INVITE.
   */
  readonly ending?: true;
}

const str = tokenField;

const int = (o: Record<string, unknown>, k: string, max: number): number => intField(o, k, 0, max);

export function serializeUpstreamSnapshot(s: UpstreamSnapshot): string {
  return serializeBounded(s, MAX_BYTES);
}

export function parseUpstreamSnapshot(input: string): UpstreamSnapshot {
  const o = parseBoundedObject(input, MAX_BYTES);
  if (o.v !== 1) failField('v', 'is not 1');
  const purpose = o.purpose;
  if (purpose !== 'live' && purpose !== 'playback' && purpose !== 'download') failField('purpose', 'is not live, playback or download');
  const vw = o.viewer;
  if (typeof vw !== 'object' || vw === null || Array.isArray(vw)) failField('viewer', 'is not an object');
  const viewer = vw as Record<string, unknown>;
  const offerSdp = o.offerSdp;
  if (typeof offerSdp !== 'string' || offerSdp.length === 0 || Buffer.byteLength(offerSdp) > MAX_OFFER_BYTES) failField('offerSdp', `is not an SDP of at most ${MAX_OFFER_BYTES} bytes`);
  return {
    v: 1,
    holder: str(o, 'holder', TOKEN),
    run: str(o, 'run', TOKEN),
    expiresAt: int(o, 'expiresAt', EPOCH_MAX),
    platformId: str(o, 'platformId', GB_ID),
    channelId: str(o, 'channelId', GB_ID),
    deviceId: str(o, 'deviceId', GB_ID),
    tenantId: str(o, 'tenantId', TOKEN),
    purpose,
    viewer: {
      sessionId: str(viewer, 'sessionId', TOKEN, 'viewer.sessionId'),
      streamId: str(viewer, 'streamId', TOKEN, 'viewer.streamId'),
      mediaNodeId: str(viewer, 'mediaNodeId', TOKEN, 'viewer.mediaNodeId'),
    },
    offerSdp,
    sdpVersion: int(o, 'sdpVersion', 2 ** 31 - 1),
    dialog: parseDialog(o.dialog),
    createdAt: int(o, 'createdAt', EPOCH_MAX),
    ...(o.ending === true ? { ending: true as const } : {}),
  };
}

export const UPSTREAM_SNAPSHOT_CODEC: SnapshotCodec<UpstreamSnapshot> = { serialize: serializeUpstreamSnapshot, parse: parseUpstreamSnapshot };
