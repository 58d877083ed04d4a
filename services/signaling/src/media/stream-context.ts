// What the parts of the media session manager share (media-session-manager.ts composes them): the deps, the
// pure table of streams and sessions, the INVITE dialog of each stream, and the two steps every part needs —
// (re)writing a stream's snapshot (SPEC §11) and tearing a stream down.
import type { Logger } from 'pino';
import type { SessionDirectory } from '../cluster/device-index.port.ts';
import type { Clock } from '../core/clock.ts';
import type { SessionJournal } from '../recovery/session-journal.ts';
import type { MediaPlane } from './media-plane.ts';
import type { DownloadProgress, MediaStream, StreamMode } from './media-session.types.ts';
import type { MediaSessionTable } from './media-sessions.ts';
import type { MediaDialog, MediaSignaling } from './media-signaling.port.ts';
import type { StreamHolderDirectory } from './stream-holders.port.ts';

/** Session ids stay routable this long without a stop (a viewer that never says goodbye). */
export const SESSION_DIRECTORY_TTL_MS = 24 * 3600_000;

export interface LiveRequest {
  readonly deviceId: string;
  readonly channelId: string;
  readonly mode: StreamMode;
}

export interface HistoryRequest extends LiveRequest {
  readonly start: Date;
  readonly end: Date;
  /** Download only: a=downloadspeed. */
  readonly speed?: number;
}

export interface MediaSessionManagerDeps {
  readonly plane: MediaPlane;
  readonly signaling: MediaSignaling;
  readonly directory: SessionDirectory;
  readonly clock: Clock;
  readonly log: Logger;
  readonly serverId: string;
  readonly newId: () => string;
  /** Cluster: stream → holder records for hook forwarding; absent standalone. */
  readonly holders?: StreamHolderDirectory | null;
  /** Session continuity (SPEC §11): snapshots of established dialogs; absent = none kept. */
  readonly journal?: SessionJournal | null;
}

export interface StreamContext {
  readonly d: MediaSessionManagerDeps;
  readonly log: Logger;
  readonly table: MediaSessionTable;
  readonly dialogs: Map<string, MediaDialog>;
  /** Ended download sessions whose progress can still be read. */
  readonly ended: Map<string, { progress: DownloadProgress; deviceId: string }>;
  isClosed(): boolean;
  /** close() began: no new stream, set-ups in flight give up. */
  markClosed(): void;
  /** SPEC §11: (re)writes the snapshot of an established stream's dialog. */
  record(stream: MediaStream): void;
  /** Tears a stream down; never rejects. */
  endStream(streamId: string, reason: string, sendBye: boolean): Promise<void>;
  /** Never rejects: an SSRC left behind in the shared store expires with its TTL. */
  releaseSsrc(nodeId: string, ssrc: string): Promise<void>;
}

export type StreamRequest = LiveRequest | HistoryRequest;
