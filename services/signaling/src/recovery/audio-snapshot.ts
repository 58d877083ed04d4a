// What survives an instance crash of a voice talk or broadcast (语音对讲 / 语音广播, GB/T 28181-2016 §9.12;
// SPEC §11 RECOVER): the device's audio INVITE dialog as this instance accepted it (we are the UAS: RFC 3261 §12
// state), the channel, the operator's source stream the media node sends to the device (ZLM startSendRtp: node,
// app, stream, the device's y= SSRC, the device's audio address and the node's sending port) and, for talk, the
// stream id the device's audio is received under (recv_stream_id, talk_<channelId>). Enough for the device's next
// owner to stop the old sending, end the old dialog, and set the session up again into the same stream ids — or
// to release it cleanly. Kept with the same store as the device dialogs' snapshots (atomic snapshot + per-instance
// index, tombstones), under its own key prefix.
// Pure: JSON in and out; parseAudioSnapshot checks every field (what Redis gives back is input).
import { parseDialog, type SavedDialog } from './session-snapshot.ts';
import { failField, intField, parseBoundedObject, serializeBounded, objectField, tokenField } from './snapshot-fields.ts';
import type { SnapshotCodec } from './session-snapshots.port.ts';

const MAX_BYTES = 16 * 1024;
const GB_ID = /^\d{20}$/;
const TOKEN = /^[\x21\x23-\x7e]{1,256}$/;
/** The names the control API admits for a source (http/routes/broadcast.ts). */
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const SSRC = /^\d{1,10}$/;
const EPOCH_MAX = 8.64e15;

export type AudioPurpose = 'talk' | 'broadcast';

export interface AudioSnapshot {
  readonly v: 1;
  /** The instance that accepted the device's audio INVITE (or that it was handed off to), and its process run. */
  readonly holder: string;
  readonly run: string;
  readonly expiresAt: number;
  /** `purpose` like the device dialogs' snapshots (recovery-decision.ts reads it). */
  readonly purpose: AudioPurpose;
  readonly deviceId: string;
  readonly channelId: string;
  /** What the media node sends to the device: the operator's stream (ZLM app/stream on that node). */
  readonly source: { readonly mediaNodeId: string; readonly app: string; readonly stream: string };
  /** The device's y= SSRC the node sends with (stopSendRtp's key). */
  readonly ssrc: string;
  /** Where the node sends to (the device's m=audio) and the node's sending (and, talk, receiving) port. */
  readonly deviceAudio: { readonly host: string; readonly port: number };
  readonly sendPort: number;
  /** Talk: the stream id the device's audio is published under on the node. */
  readonly receiveStreamId?: string;
  readonly dialog: SavedDialog;
  readonly createdAt: number;
  /** Handed off (the device moved while this instance's predecessor was alive). */
  readonly previousHolder?: string;
}

const str = tokenField;
const int = intField;
const obj = objectField;

export function serializeAudioSnapshot(s: AudioSnapshot): string {
  return serializeBounded(s, MAX_BYTES);
}

export function parseAudioSnapshot(input: string): AudioSnapshot {
  const o = parseBoundedObject(input, MAX_BYTES);
  if (o.v !== 1) failField('v', 'is not 1');
  const purpose = o.purpose;
  if (purpose !== 'talk' && purpose !== 'broadcast') failField('purpose', 'is not talk or broadcast');
  const source = obj(o.source, 'source');
  const to = obj(o.deviceAudio, 'deviceAudio');
  const channelId = str(o, 'channelId', GB_ID);
  const receive = o.receiveStreamId;
  if (purpose === 'talk' && receive !== `talk_${channelId}`) failField('receiveStreamId', 'is not the talk stream of the channel');
  if (purpose === 'broadcast' && receive !== undefined) failField('receiveStreamId', 'is set on a broadcast');
  return {
    v: 1,
    holder: str(o, 'holder', TOKEN),
    run: str(o, 'run', TOKEN),
    expiresAt: int(o, 'expiresAt', 0, EPOCH_MAX),
    purpose,
    deviceId: str(o, 'deviceId', GB_ID),
    channelId,
    source: { mediaNodeId: str(source, 'mediaNodeId', NAME, 'source.mediaNodeId'), app: str(source, 'app', NAME, 'source.app'), stream: str(source, 'stream', NAME, 'source.stream') },
    ssrc: str(o, 'ssrc', SSRC),
    deviceAudio: { host: str(to, 'host', TOKEN, 'deviceAudio.host'), port: int(to, 'port', 1, 65_535, 'deviceAudio.port') },
    sendPort: int(o, 'sendPort', 1, 65_535),
    ...(purpose === 'talk' ? { receiveStreamId: `talk_${channelId}` } : {}),
    dialog: parseDialog(o.dialog),
    createdAt: int(o, 'createdAt', 0, EPOCH_MAX),
    ...(o.previousHolder === undefined ? {} : { previousHolder: str(o, 'previousHolder', TOKEN) }),
  };
}

export const AUDIO_SNAPSHOT_CODEC: SnapshotCodec<AudioSnapshot> = { serialize: serializeAudioSnapshot, parse: parseAudioSnapshot };
