// The snapshot requests waiting for pictures (GB/T 28181-2022 §9.14 SnapShotConfig): each request
// hands the device an UploadURL whose last segment is a random token (also the GB SessionID); an
// upload is accepted only for a known, unexpired token, and at most as many pictures as asked for
// (SPEC SEC-3: a leaked URL cannot fill the disk). Pure bookkeeping, time passed in.

export interface UploadSlot {
  readonly token: string;
  readonly deviceId: string;
  readonly channelId: string;
  readonly expected: number;
  readonly expiresAt: number;
  received: number;
  finished: boolean;
}

export interface SnapshotUploads {
  open(slot: Omit<UploadSlot, 'received' | 'finished'>): void;
  /** Claims one picture for `token`: the slot, or null (unknown, expired, already full). */
  claim(token: string, now: number): UploadSlot | null;
  /** Notify/UploadSnapShotFinished: no more uploads for this session. */
  finish(token: string): UploadSlot | null;
  readonly size: number;
}

/** Path of the upload endpoint; the token follows (http/routes/snapshot-upload.ts). */
export const SNAPSHOT_UPLOAD_PATH = '/vms/snapshot/upload/';

/** Tokens are 32 hexadecimal characters (16 random bytes). */
export const UPLOAD_TOKEN_PATTERN = /^[0-9a-f]{32}$/;

export function createSnapshotUploads(maxPending = 1000): SnapshotUploads {
  const slots = new Map<string, UploadSlot>();
  const sweep = (now: number): void => {
    for (const [token, slot] of slots) if (slot.expiresAt <= now) slots.delete(token);
  };
  return {
    open(s) {
      // insertion order = age: past the bound the oldest request loses its slot, never the new one
      while (slots.size >= maxPending) {
        const oldest = slots.keys().next().value;
        if (oldest === undefined) break;
        slots.delete(oldest);
      }
      slots.set(s.token, { ...s, received: 0, finished: false });
    },
    claim(token, now) {
      sweep(now);
      const slot = slots.get(token);
      if (slot === undefined || slot.finished || slot.received >= slot.expected) return null;
      slot.received++;
      return slot;
    },
    finish(token) {
      const slot = slots.get(token);
      if (slot === undefined) return null;
      slot.finished = true;
      slots.delete(token);
      return slot;
    },
    get size() {
      return slots.size;
    },
  };
}
