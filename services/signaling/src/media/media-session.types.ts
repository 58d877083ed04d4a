// The domain of live view, playback and download (SPEC §8 media parts, §9): one *stream* per INVITE
// dialog to a device, one *session* per API caller. Live streams are shared: every play of a channel
// gets its own sessionId (so each viewer stops only itself) and the channel's one stream; the stream
// ends with its last session. Playback and download streams have exactly one session each.
import type { MediaPurpose, RtpTcpMode, StreamUrls } from '@vms/media';

export type StreamMode = RtpTcpMode;
export const STREAM_MODES: readonly StreamMode[] = ['udp', 'tcp-passive', 'tcp-active'];

/** 'inviting' until the device's 200 (and ACK), 'ready' once the media node reports the stream. */
export type StreamState = 'inviting' | 'established' | 'ready' | 'ended';

export interface MediaStream {
  /** ZLM stream id (openRtpServer stream_id, app `rtp`). */
  readonly streamId: string;
  readonly purpose: MediaPurpose;
  readonly deviceId: string;
  readonly channelId: string;
  readonly nodeId: string;
  /** y= SSRC, 10 digits, that the media node filters on: ours, or the one the device answered instead. */
  ssrc: string;
  /** The SSRC we allocated and offered: released when the stream ends, whatever the device answered. */
  readonly allocatedSsrc: string;
  readonly mode: StreamMode;
  /** RTP receive port the media node opened. */
  readonly rtpPort: number;
  readonly urls: StreamUrls;
  state: StreamState;
  /** SIP Call-ID of the INVITE dialog, once sent. */
  callId: string | null;
  readonly createdAt: number;
  /** Playback / download: the requested range, epoch ms. */
  readonly range: { readonly start: number; readonly end: number } | null;
  /** Download: a=downloadspeed asked for. */
  readonly speed: number;
  /** Playback: MANSRTSP CSeq of the last INFO (Annex B: increases per request). */
  rtspSeq: number;
  /** Playback / download: MediaStatus 121 arrived (the device sent the whole range). */
  endOfFile: boolean;
}

export interface MediaSession {
  readonly sessionId: string;
  readonly streamId: string;
  readonly createdAt: number;
}

/** What `POST /vms/play/start` (and playback / download start) answers. */
export interface StartAnswer {
  readonly sessionId: string;
  readonly streamId: string;
  readonly urls: StreamUrls;
  readonly mediaNodeId: string;
  readonly ssrc: string;
  readonly streamMode: StreamMode;
  /** Viewers of the stream, this one included (live). */
  readonly viewers: number;
  /** The media node already reported the stream (on_stream_changed). */
  readonly ready: boolean;
}

export type PlaybackAction = 'pause' | 'resume' | 'seek' | 'speed';
export const PLAYBACK_ACTIONS: readonly PlaybackAction[] = ['pause', 'resume', 'seek', 'speed'];

export interface DownloadProgress {
  readonly sessionId: string;
  /** 0..1: media time sent (estimated from elapsed time × speed) over the range; 1 at end of file. */
  readonly progress: number;
  readonly endOfFile: boolean;
  readonly state: StreamState;
  readonly urls: StreamUrls;
}
