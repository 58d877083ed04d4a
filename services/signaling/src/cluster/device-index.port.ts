// SPEC ROUTE-1: requests routed by `sessionId` (play stop, playback control) and by `SN` (record query
// results) name something the device's owner issued, not the device. To route them on any instance,
// the owner records `key → deviceId` in a cluster-wide index when it issues the key:
//
//   sessions: after a play/playback session is created:   await sessions.remember(sessionId, deviceId, ttlMs)
//             when it ends:                                await sessions.forget(sessionId)
//   record queries: when a RecordInfo query gets its SN:    await sns.remember(sn, deviceId, ttlMs)
//
// Keys must be unique across the cluster (a random id, or prefixed with the node code): an index
// entry is overwritten by the last writer. Standalone: an in-memory index; cluster: Redis with a local
// copy of this instance's own entries, so the owner still routes its own keys while Redis is down
// (FAIL-3).
import type { DeviceId } from '../devices/device.types.ts';

export interface DeviceKeyIndex {
  /** Records `key → deviceId` for ttlMs. */
  remember(key: string, deviceId: DeviceId, ttlMs: number): Promise<void>;
  /** The device `key` belongs to, or null when unknown or expired. Rejects only when the store is unreachable and the key is not one of ours. */
  deviceOf(key: string): Promise<DeviceId | null>;
  forget(key: string): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
}

/** Play / playback session id → device (routedBy: 'session'). */
export type SessionDirectory = DeviceKeyIndex;

/** Record-query SN → device (routedBy: 'sn'). */
export type SnDirectory = DeviceKeyIndex;
