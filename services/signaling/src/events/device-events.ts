// Device-side events of one instance, for later issues to subscribe to (cluster ownership, cascade
// NOTIFY, alarm fan-out). Emitted by the SIP side (`src/sip/**`) after the fact; listeners run
// synchronously in registration order, and a throwing listener is logged, never propagated: a
// subscriber can never break device uplink handling (SPEC CASC-4).
//
//   const off = events.on('offline', ({ deviceId, reason }) => …);
//
// 'uplink' fires for every request a device sends (REGISTER, Keepalive, any MESSAGE): it is the OWN-1
// hook, on the keepalive hot path, so its listeners must be O(1) and must not await.
import type { AlarmNotify, CatalogEvent, DeviceUpgradeResult, MobilePositionNotify } from '@vms/gb28181';
import type { Logger } from 'pino';
import type { ChannelId, ChannelInput, DeviceId } from '../devices/device.types.ts';

export type UplinkKind = 'register' | 'keepalive' | 'message' | 'unregister';

/** One channel's change in GB/T 28181 catalog terms (§A.2.5): ADD, DEL, UPDATE, ON, OFF, VLOST, DEFECT. */
export interface ChannelChange {
  readonly channelId: ChannelId;
  readonly event: CatalogEvent;
}

export interface DeviceEventMap {
  /** A device became online (REGISTER, a Keepalive after it was marked offline, or its owner re-asserting it). */
  online: { readonly deviceId: DeviceId; readonly at: number; readonly reason: 'register' | 'keepalive' | 'reasserted' };
  /** A device became offline: it unregistered, its registration expired, or it stopped heartbeating (OWN-2). */
  offline: { readonly deviceId: DeviceId; readonly at: number; readonly reason: 'unregister' | 'expired' | 'keepalive-timeout' };
  /**
   * Channels of a device changed. `sync`: a catalog query finished (`channels` is the whole catalog when
   * `complete`, else what arrived); `report`: unsolicited Catalog Response; `notify`: Catalog Notify
   * (ADD/UPDATE/ON/OFF… in `channels`, DEL in `removed`). `changes`: what changed per channel — a
   * notify's own events; for a sync or report, the difference from the channels stored before
   * (sip/catalog-changes.ts; a complete sync's missing channels are DELs, also in `removed`).
   */
  catalogChanged: {
    readonly deviceId: DeviceId;
    readonly at: number;
    readonly source: 'sync' | 'report' | 'notify';
    readonly complete: boolean;
    readonly channels: readonly ChannelInput[];
    readonly removed: readonly ChannelId[];
    readonly changes: readonly ChannelChange[];
  };
  /** Alarm Notify as the device sent it (already acknowledged with Response/Alarm). */
  alarm: { readonly deviceId: DeviceId; readonly at: number; readonly alarm: AlarmNotify; readonly via?: 'message' | 'notify' };
  /** MobilePosition Notify (§9.11), in a NOTIFY under our subscription or, from some devices, a MESSAGE. */
  mobilePosition: { readonly deviceId: DeviceId; readonly at: number; readonly position: MobilePositionNotify };
  /**
   * MediaStatus Notify (GB/T 28181-2016 §9.8, NotifyType 121 = end of file), sent outside the dialog
   * with the INVITE's Call-ID: the media sessions match it by `callId`.
   */
  mediaStatus: { readonly deviceId: DeviceId; readonly at: number; readonly callId: string; readonly notifyType: string };
  /** GB/T 28181-2022 Notify/UploadSnapShotFinished: the device uploaded the pictures of `sessionId`. */
  snapshotFinished: { readonly deviceId: DeviceId; readonly at: number; readonly sessionId: string; readonly fileIds: readonly string[] };
  /** GB/T 28181-2022 Notify/DeviceUpgradeResult. */
  upgradeResult: { readonly deviceId: DeviceId; readonly at: number; readonly result: DeviceUpgradeResult };
  /** Any request from a registered device (OWN-1). `unregister` is the OWN-3 trigger. */
  uplink: { readonly deviceId: DeviceId; readonly at: number; readonly kind: UplinkKind };
}

export type DeviceEventName = keyof DeviceEventMap;
export type DeviceEventListener<K extends DeviceEventName> = (event: DeviceEventMap[K]) => void;

export interface DeviceEvents {
  /** Returns an unsubscribe function. */
  on<K extends DeviceEventName>(name: K, listener: DeviceEventListener<K>): () => void;
  emit<K extends DeviceEventName>(name: K, event: DeviceEventMap[K]): void;
  /** Cheap guard for emitters that would build an event object on a hot path. */
  hasListeners(name: DeviceEventName): boolean;
}

export function createDeviceEvents(log: Pick<Logger, 'error'>): DeviceEvents {
  const listeners: { [K in DeviceEventName]: Set<DeviceEventListener<K>> } = {
    online: new Set(),
    offline: new Set(),
    catalogChanged: new Set(),
    alarm: new Set(),
    mobilePosition: new Set(),
    mediaStatus: new Set(),
    snapshotFinished: new Set(),
    upgradeResult: new Set(),
    uplink: new Set(),
  };
  return {
    on(name, listener) {
      const set = listeners[name] as Set<typeof listener>;
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    emit(name, event) {
      const set = listeners[name] as Set<(e: typeof event) => void>;
      if (set.size === 0) return;
      for (const listener of set) {
        try {
          listener(event);
        } catch (err) {
          log.error({ err, event: name, deviceId: event.deviceId }, 'device event listener failed');
        }
      }
    },
    hasListeners: (name) => listeners[name].size > 0,
  };
}
