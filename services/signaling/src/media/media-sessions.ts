// The pure core of media sessions: streams, the sessions (viewers) attached to them, the live stream
// of each channel, and look-ups by Call-ID. No I/O and no clock: the manager passes times in.
import type { MediaSession, MediaStream } from './media-session.types.ts';

export class MediaSessionTable {
  readonly #streams = new Map<string, MediaStream>();
  readonly #sessions = new Map<string, MediaSession>();
  readonly #viewers = new Map<string, Set<string>>();
  readonly #liveByChannel = new Map<string, string>();
  readonly #byCallId = new Map<string, string>();

  addStream(s: MediaStream): void {
    if (this.#streams.has(s.streamId)) throw new Error(`stream ${s.streamId} exists`);
    this.#streams.set(s.streamId, s);
    this.#viewers.set(s.streamId, new Set());
    if (s.purpose === 'live') this.#liveByChannel.set(s.channelId, s.streamId);
  }

  setCallId(streamId: string, callId: string): void {
    const s = this.#streams.get(streamId);
    if (s === undefined) return;
    s.callId = callId;
    this.#byCallId.set(callId, streamId);
  }

  /** Attaches a new session; returns the viewer count. */
  attach(session: MediaSession): number {
    const viewers = this.#viewers.get(session.streamId);
    if (viewers === undefined) throw new Error(`stream ${session.streamId} unknown`);
    this.#sessions.set(session.sessionId, session);
    viewers.add(session.sessionId);
    return viewers.size;
  }

  /** Detaches a session; `last` when its stream has no session left (the caller ends the stream). */
  detach(sessionId: string): { stream: MediaStream; last: boolean } | null {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) return null;
    this.#sessions.delete(sessionId);
    const stream = this.#streams.get(session.streamId);
    if (stream === undefined) return null;
    const viewers = this.#viewers.get(stream.streamId);
    viewers?.delete(sessionId);
    return { stream, last: (viewers?.size ?? 0) === 0 };
  }

  /** Removes a stream and every session on it; returns the session ids that ended with it. */
  removeStream(streamId: string): string[] {
    const s = this.#streams.get(streamId);
    if (s === undefined) return [];
    this.#streams.delete(streamId);
    const ids = [...(this.#viewers.get(streamId) ?? [])];
    this.#viewers.delete(streamId);
    for (const id of ids) this.#sessions.delete(id);
    if (this.#liveByChannel.get(s.channelId) === streamId) this.#liveByChannel.delete(s.channelId);
    if (s.callId !== null && this.#byCallId.get(s.callId) === streamId) this.#byCallId.delete(s.callId);
    return ids;
  }

  stream(streamId: string): MediaStream | undefined {
    return this.#streams.get(streamId);
  }

  session(sessionId: string): MediaSession | undefined {
    return this.#sessions.get(sessionId);
  }

  streamOfSession(sessionId: string): MediaStream | undefined {
    const s = this.#sessions.get(sessionId);
    return s === undefined ? undefined : this.#streams.get(s.streamId);
  }

  liveStreamOf(channelId: string): MediaStream | undefined {
    const id = this.#liveByChannel.get(channelId);
    return id === undefined ? undefined : this.#streams.get(id);
  }

  streamByCallId(callId: string): MediaStream | undefined {
    const id = this.#byCallId.get(callId);
    return id === undefined ? undefined : this.#streams.get(id);
  }

  /** Session ids (viewers) of a stream, in attach order. */
  sessionIdsOf(streamId: string): string[] {
    return [...(this.#viewers.get(streamId) ?? [])];
  }

  viewers(streamId: string): number {
    return this.#viewers.get(streamId)?.size ?? 0;
  }

  streamIds(): string[] {
    return [...this.#streams.keys()];
  }

  get streamCount(): number {
    return this.#streams.size;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }
}
