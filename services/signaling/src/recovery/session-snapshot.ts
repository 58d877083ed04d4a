// What survives an instance crash (SPEC §11 RECOVER, reference 003): one snapshot per established INVITE
// dialog to a device (live, playback, download), enough for another instance to end that dialog cleanly
// (RFC 3261 §12: Call-ID, tags, CSeqs, route set, remote target) and to re-establish the stream into the
// same media node, stream id, RTP port and SSRC, so the URLs viewers hold keep working.
// Pure: JSON in and out. A snapshot read back from Redis is input like any other: parseSnapshot checks
// every field and bound and throws SnapshotFormatError, never a TypeError.
import type { MediaPurpose } from '@vms/media';
import type { StreamMode } from '../media/media-session.types.ts';
import { intField, objectField, SnapshotFormatError, type SnapshotObject } from './snapshot-fields.ts';

export { SnapshotFormatError } from './snapshot-fields.ts';

export const SNAPSHOT_VERSION = 1;
/** A snapshot longer than this is refused both ways (a live stream with its viewers fits in a few KiB). */
export const MAX_SNAPSHOT_BYTES = 64 * 1024;
/** Viewer session ids kept per snapshot; a live stream with more keeps the first ones (the rest re-play). */
export const MAX_SAVED_VIEWERS = 500;

/** RFC 3261 §12 dialog state as text (name-addrs and URIs formatted by the SIP package). */
export interface SavedDialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** From (our side), name-addr without tag. */
  readonly local: string;
  /** To (the device), name-addr without tag. */
  readonly remote: string;
  readonly localSeq: number | null;
  readonly remoteSeq: number | null;
  readonly routeSet: readonly string[];
  readonly remoteTarget: string;
  /** The device's flow when the dialog was set up: transport and its address as seen by us. */
  readonly transport: 'udp' | 'tcp';
  readonly remoteAddress: string;
  readonly remotePort: number;
}

export interface SessionSnapshot {
  readonly v: typeof SNAPSHOT_VERSION;
  /** Instance holding the dialog (its index lists this snapshot) and the process run that wrote it. */
  readonly holder: string;
  readonly run: string;
  readonly streamId: string;
  readonly purpose: MediaPurpose;
  readonly deviceId: string;
  readonly channelId: string;
  readonly nodeId: string;
  /** SSRC the media node filters on, and the one allocated (released at the end). */
  readonly ssrc: string;
  readonly allocatedSsrc: string;
  readonly mode: StreamMode;
  readonly rtpPort: number;
  readonly dialog: SavedDialog;
  /** API sessions (viewers) of the stream: their ids stay routable and stoppable after a recovery. */
  readonly sessionIds: readonly string[];
  readonly createdAt: number;
  /** Epoch ms after which the snapshot is not worth recovering (its Redis TTL, renewed while alive). */
  readonly expiresAt: number;
  /** Playback / download range, epoch ms. */
  readonly range: { readonly start: number; readonly end: number } | null;
  readonly speed: number;
  /**
   * Handed off (the device moved to the index's holder while this instance was alive): the instance that still
   * holds the stream's SSRC and stream-holder record, taken over from it rather than from `holder`.
   */
  readonly previousHolder?: string;
}

export function serializeSnapshot(s: SessionSnapshot): string {
  const text = JSON.stringify(s.sessionIds.length > MAX_SAVED_VIEWERS ? { ...s, sessionIds: s.sessionIds.slice(0, MAX_SAVED_VIEWERS) } : s);
  if (Buffer.byteLength(text) > MAX_SNAPSHOT_BYTES) throw new SnapshotFormatError('snapshot', `longer than ${MAX_SNAPSHOT_BYTES} bytes`);
  return text;
}

const PURPOSES: readonly MediaPurpose[] = ['live', 'playback', 'download'];
const MODES: readonly StreamMode[] = ['udp', 'tcp-passive', 'tcp-active'];
/** Ids, tags, URIs: printable ASCII without spaces or quotes, bounded. */
const TOKEN_RE = /^[\x21\x23-\x7e]{1,256}$/;
const SSRC_RE = /^[01]\d{9}$/;

type Obj = SnapshotObject;
const obj = objectField;
function token(o: Obj, k: string, field = k, allowEmpty = false): string {
  const v = o[k];
  if (typeof v !== 'string' || !(TOKEN_RE.test(v) || (allowEmpty && v === ''))) throw new SnapshotFormatError(field, 'is not a bounded token');
  return v;
}
/** Name-addrs may hold a quoted display name: any printable text, bounded. */
function text(o: Obj, k: string, field = k): string {
  const v = o[k];
  if (typeof v !== 'string' || v.length === 0 || v.length > 512 || /[\x00-\x1f\x7f]/.test(v)) throw new SnapshotFormatError(field, 'is not bounded printable text');
  return v;
}
const int = intField;
function seq(o: Obj, k: string): number | null {
  return o[k] === null ? null : int(o, k, 0, 2 ** 31 - 1, `dialog.${k}`); // RFC 3261 §8.1.1.5: below 2^31
}
function oneOf<T extends string>(o: Obj, k: string, values: readonly T[]): T {
  const v = o[k];
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) throw new SnapshotFormatError(k, `is not one of ${values.join(', ')}`);
  return v as T;
}
function match(o: Obj, k: string, re: RegExp, what: string): string {
  const v = o[k];
  if (typeof v !== 'string' || !re.test(v)) throw new SnapshotFormatError(k, `is not ${what}`);
  return v;
}

const EPOCH_MAX = 8.64e15;

/** The saved dialog in `v` (any kind of snapshot); SnapshotFormatError naming the first bad field. */
export function parseDialog(v: unknown): SavedDialog {
  const d = obj(v, 'dialog');
  const routeSet = d.routeSet;
  if (!Array.isArray(routeSet) || routeSet.length > 16) throw new SnapshotFormatError('dialog.routeSet', 'is not a list of at most 16 entries');
  return {
    callId: token(d, 'callId', 'dialog.callId'),
    localTag: token(d, 'localTag', 'dialog.localTag'),
    // GB28181 devices sometimes answer without a To-tag (dialog-state.ts)
    remoteTag: token(d, 'remoteTag', 'dialog.remoteTag', true),
    local: text(d, 'local', 'dialog.local'),
    remote: text(d, 'remote', 'dialog.remote'),
    localSeq: seq(d, 'localSeq'),
    remoteSeq: seq(d, 'remoteSeq'),
    routeSet: routeSet.map((r, i) => text({ r }, 'r', `dialog.routeSet[${i}]`)),
    remoteTarget: text(d, 'remoteTarget', 'dialog.remoteTarget'),
    transport: oneOf(d, 'transport', ['udp', 'tcp'] as const),
    remoteAddress: token(d, 'remoteAddress', 'dialog.remoteAddress'),
    remotePort: int(d, 'remotePort', 1, 65_535, 'dialog.remotePort'),
  };
}

/** The snapshot in `text`; SnapshotFormatError naming the first bad field. */
export function parseSnapshot(input: string): SessionSnapshot {
  if (input.length > MAX_SNAPSHOT_BYTES) throw new SnapshotFormatError('snapshot', `longer than ${MAX_SNAPSHOT_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(input);
  } catch {
    throw new SnapshotFormatError('snapshot', 'is not JSON');
  }
  const o = obj(raw, 'snapshot');
  if (o.v !== SNAPSHOT_VERSION) throw new SnapshotFormatError('v', `is not ${SNAPSHOT_VERSION}`);
  const ids = o.sessionIds;
  if (!Array.isArray(ids) || ids.length > MAX_SAVED_VIEWERS) throw new SnapshotFormatError('sessionIds', `is not a list of at most ${MAX_SAVED_VIEWERS} ids`);
  let range: SessionSnapshot['range'] = null;
  if (o.range !== null) {
    const r = obj(o.range, 'range');
    range = { start: int(r, 'start', 0, EPOCH_MAX, 'range.start'), end: int(r, 'end', 0, EPOCH_MAX, 'range.end') };
  }
  const speed = o.speed;
  if (typeof speed !== 'number' || !(speed > 0 && speed <= 256)) throw new SnapshotFormatError('speed', 'is not in (0, 256]');
  return {
    v: SNAPSHOT_VERSION,
    holder: token(o, 'holder'),
    run: token(o, 'run'),
    streamId: token(o, 'streamId'),
    purpose: oneOf(o, 'purpose', PURPOSES),
    deviceId: token(o, 'deviceId'),
    channelId: token(o, 'channelId'),
    nodeId: token(o, 'nodeId'),
    ssrc: match(o, 'ssrc', SSRC_RE, 'a 10-digit SSRC'),
    allocatedSsrc: match(o, 'allocatedSsrc', SSRC_RE, 'a 10-digit SSRC'),
    mode: oneOf(o, 'mode', MODES),
    rtpPort: int(o, 'rtpPort', 1, 65_535),
    dialog: parseDialog(o.dialog),
    sessionIds: ids.map((id, i) => token({ id }, 'id', `sessionIds[${i}]`)),
    createdAt: int(o, 'createdAt', 0, EPOCH_MAX),
    expiresAt: int(o, 'expiresAt', 0, EPOCH_MAX),
    range,
    speed,
    ...(o.previousHolder === undefined ? {} : { previousHolder: token(o, 'previousHolder') }),
  };
}
