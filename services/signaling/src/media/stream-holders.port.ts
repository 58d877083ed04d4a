// Which signaling instance holds a stream on a media node (its INVITE dialog, its sessions). ZLM's
// hooks go to one load-balanced URL and so may reach any instance; the one that receives a hook about
// a stream it does not hold looks the holder up here and forwards the hook to it (media-hooks.ts).
// Written when the stream's RTP port is opened, removed (only by its holder) when the stream ends;
// the TTL bounds what a crashed holder leaves behind.
export interface StreamHolderDirectory {
  /** Records this instance as the holder of `streamId` on media node `nodeId` for ttlMs. */
  claim(nodeId: string, streamId: string, ttlMs: number): Promise<void>;
  /** The holder's node code, or null when nobody holds it (ended, expired, never ours). */
  holderOf(nodeId: string, streamId: string): Promise<string | null>;
  /** Removes the record if this instance still holds it. */
  release(nodeId: string, streamId: string): Promise<void>;
}
