// Whether an orphaned talk or broadcast is still wanted (SPEC §11 RECOVER for GB/T 28181 §9.12 audio), once the
// device's new owner holds its recovery lock (who and when: decideOrphan, recovery-decision.ts). Pure: the facts
// are read from the media node by audio-recovery.ts.
//
// "Still has viewers", for audio, is read on the media node, the only party that outlives the crashed instance:
//   - the operator's side is the source stream the node sends to the device (the console's microphone push, or
//     the file/stream being broadcast). An operator who hung up stops pushing it: no source, nothing to say —
//     released. This holds for talk and broadcast alike.
//   - talk only: the device's audio is the node's stream talk_<channelId>, which the operator plays. That stream
//     present with no reader means the operator stopped listening — released. Absent means the device stopped
//     sending (it rebooted or moved): no evidence either way, the source decides.
//   - a new audio session started on the channel since the crash (one per channel, sip-broadcast.ts) supersedes
//     the orphan — released (its sending stopped, the new one kept).
// A media node that does not answer is asked again at the next scan, until give-up.
import type { MediaView } from './recovery-decision.ts';

export interface AudioMediaFacts {
  readonly purpose: 'talk' | 'broadcast';
  /** The operator's source stream on the node. */
  readonly source: MediaView;
  /** Talk: the device's audio stream (talk_<channelId>); ignored for a broadcast. */
  readonly received: MediaView;
  /** This instance runs an audio session on the channel already. */
  readonly channelBusyHere: boolean;
}

export type AudioMediaStep =
  /** A new Notify/Broadcast: the device INVITEs again, answered into the same source and talk stream id. */
  | { readonly kind: 'reestablish' }
  | { readonly kind: 'release'; readonly reason: 'operator source gone' | 'nobody listens to the device' | 'channel taken by a new audio session' }
  | { readonly kind: 'retry'; readonly reason: 'media node unreachable' };

export function decideAudioMedia(f: AudioMediaFacts): AudioMediaStep {
  if (f.channelBusyHere) return { kind: 'release', reason: 'channel taken by a new audio session' };
  const talk = f.purpose === 'talk';
  if (f.source.kind === 'unreachable' || (talk && f.received.kind === 'unreachable')) return { kind: 'retry', reason: 'media node unreachable' };
  if (f.source.kind === 'absent') return { kind: 'release', reason: 'operator source gone' };
  if (talk && f.received.kind === 'present' && f.received.readers <= 0) return { kind: 'release', reason: 'nobody listens to the device' };
  return { kind: 'reestablish' };
}
