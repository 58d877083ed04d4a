// What to do with one orphaned session snapshot (SPEC §11 RECOVER, reference 003 §2.3: "rather fail to recover
// than recover wrongly"). Pure: the facts are gathered by session-recovery.ts, time is passed in.
//
// A snapshot is orphaned when its holder is gone: the holder's node row left the online window (crash), or
// it is this instance's own entry written by an earlier run (restart with the same instance id).
//   1. entry unusable (expired, malformed)            → forget it
//   2. the give-up time has passed                     → release (free what it held; BYE if the device is here)
//   3. device owned here and reachable                 → recover (lock, then ask the media node: decideMedia)
//   4. otherwise                                       → wait for the device to come back
// A recovery that fails (device refuses, media node down) is tried again at the next scan, until step 2.
// The give-up clock starts when this instance first saw the entry orphaned, so a session is recovered or
// released within node online window + one scan period + give-up.
import type { DialogSnapshot, IndexedSnapshot } from './session-snapshots.port.ts';

/** Any snapshot kind with a purpose: device media dialogs (live, playback, download), audio (talk, broadcast). */
type PurposeSnapshot = DialogSnapshot & { readonly purpose: string };

export interface OrphanFacts<T extends PurposeSnapshot = PurposeSnapshot> {
  readonly now: number;
  readonly entry: IndexedSnapshot<T>;
  /** When this instance first saw the entry orphaned. */
  readonly orphanSince: number;
  readonly giveUpAfterMs: number;
  /** This instance holds the device's ownership (OWN-1: it registered or heartbeats here). */
  readonly ownedHere: boolean;
  /** This instance has the device's flow, so it can INVITE it. */
  readonly reachable: boolean;
}

export type OrphanStep =
  | { readonly kind: 'forget'; readonly reason: 'expired' | 'malformed' }
  | { readonly kind: 'recover' }
  | { readonly kind: 'release'; readonly reason: 'not recovered in time' | 'download not resumed' }
  | { readonly kind: 'wait' };

export function decideOrphan<T extends PurposeSnapshot>(f: OrphanFacts<T>): OrphanStep {
  if (f.entry.state !== 'ok') return { kind: 'forget', reason: f.entry.state };
  // a download is a file transfer with a range: a new INVITE would restart it, so it ends cleanly instead
  if (f.entry.snapshot.purpose === 'download') return { kind: 'release', reason: 'download not resumed' };
  if (f.now - f.orphanSince >= f.giveUpAfterMs) return { kind: 'release', reason: 'not recovered in time' };
  if (f.ownedHere && f.reachable) return { kind: 'recover' };
  return { kind: 'wait' };
}

/** What the media node says about the stream id (getMediaList): unreachable, not there, or there with readers. */
export type MediaView = { readonly kind: 'unreachable' } | { readonly kind: 'absent' } | { readonly kind: 'present'; readonly readers: number };

export type MediaStep =
  /** New INVITE into the same stream id, RTP port and SSRC: the viewers' URLs keep working. */
  | { readonly kind: 'reinvite' }
  | { readonly kind: 'release'; readonly reason: 'no viewers' | 'stream gone from the media node' | 'stream taken over by a new play' }
  /** Ask again at the next scan (until the give-up time). */
  | { readonly kind: 'retry'; readonly reason: 'media node unreachable' };

export interface MediaFacts {
  readonly media: MediaView;
  /** This instance already runs a stream under that id (a play started after the crash took the stream id over). */
  readonly streamIdInUseHere: boolean;
}

export function decideMedia(f: MediaFacts): MediaStep {
  if (f.streamIdInUseHere) return { kind: 'release', reason: 'stream taken over by a new play' };
  if (f.media.kind === 'unreachable') return { kind: 'retry', reason: 'media node unreachable' };
  if (f.media.kind === 'absent') return { kind: 'release', reason: 'stream gone from the media node' };
  if (f.media.readers <= 0) return { kind: 'release', reason: 'no viewers' };
  return { kind: 'reinvite' };
}
