/**
 * Cascade events travelling between instances (SPEC CASC-3): the action to perform, carried **by
 * value** — the channel snapshot, the whole alarm, the raw SIP request — so the instance that
 * executes it needs no look-up of the trigger's data and does not depend on whether the trigger's
 * database transaction committed.
 *
 * Wire format: one JSON object per pub/sub message, versioned by `v`. A receiver drops (and
 * reports) anything it cannot read — another version, an unknown kind, a payload missing what the
 * kind requires — rather than guessing. Fields it does not know inside a known payload are kept, so a
 * newer sender can add optional data without a version bump.
 *
 * Protocol-agnostic on purpose (STYLE §5): this package never imports @vms/gb28181, so the payloads
 * are plain data whose field names follow the MANSCDP codecs (a decoded AlarmNotify or CatalogItem
 * spreads straight into them).
 */
export const CASCADE_EVENT_VERSION = 1;
/** The one shared channel every instance subscribes to (CASC-3: broadcast, receivers decide). */
export const CASCADE_CHANNEL = 'vms:cascade:events';
/** Larger messages are refused at publish and dropped at receipt: a raw SIP request is a few KiB. */
export const MAX_CASCADE_MESSAGE_BYTES = 1024 * 1024;

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Catalog notify events (GB/T 28181-2016 §9.11, §A.2.5). */
export const CASCADE_CATALOG_EVENTS = ['ADD', 'DEL', 'ON', 'OFF', 'UPDATE', 'VLOST', 'DEFECT'] as const;
export type CascadeCatalogEvent = (typeof CASCADE_CATALOG_EVENTS)[number];

/** A channel's catalog item as stored when the event arose; `deviceId` is the item's DeviceID (the channel id). */
export interface CatalogChannelSnapshot {
  readonly deviceId: string;
  readonly [field: string]: JsonValue | undefined;
}

export interface CatalogNotifyPayload {
  readonly event: CascadeCatalogEvent;
  /** The device (IPC/NVR) the channel belongs to: with `channel.deviceId` it keys the platform sharing table. */
  readonly deviceId: string;
  readonly channel: CatalogChannelSnapshot;
}

/** Every field of an Alarm Notify (§A.2.5) but the SN, which the leader assigns for its own NOTIFY. */
export interface AlarmSnapshot {
  /** The alarm source (channel or device id) as the device sent it. */
  readonly deviceId: string;
  readonly alarmPriority: string;
  readonly alarmMethod: string;
  readonly alarmTime?: string;
  readonly alarmDescription?: string;
  readonly longitude?: string;
  readonly latitude?: string;
  readonly alarmType?: string;
  readonly eventType?: string;
}

export interface AlarmNotifyPayload {
  /** The device that reported the alarm (its owner is where the event arose). */
  readonly deviceId: string;
  readonly alarm: AlarmSnapshot;
}

/** Mobile position report (§9.11, §A.2.5), SN excluded. */
export interface PositionSnapshot {
  readonly deviceId: string;
  readonly time: string;
  readonly longitude: string;
  readonly latitude: string;
  readonly speed?: string;
  readonly direction?: string;
  readonly altitude?: string;
}

export interface MobilePositionNotifyPayload {
  readonly deviceId: string;
  readonly position: PositionSnapshot;
}

/** A request from an upstream platform that the target device's owner must send on (CASC-3). */
export interface UpstreamControlPayload {
  /** Server id of the upstream platform the request came from. */
  readonly platformId: string;
  /** The device (or channel) the request is for; its owner executes. */
  readonly targetDeviceId: string;
  /** The raw SIP request bytes as received, base64. */
  readonly request: string;
}

/**
 * A device's answer to an upstream's query (GB/T 28181 §9.5: the Response goes back to the asker), from the
 * device's owner to the leader, which alone talks to upstreams. One payload per Response MESSAGE (a paged
 * Catalog or RecordInfo answer is several), already carrying the upstream's SN.
 */
export interface UpstreamResponsePayload {
  /** Server id of the upstream platform that asked. */
  readonly platformId: string;
  /** The device that answered. */
  readonly deviceId: string;
  /** CmdType of the Response (Catalog, DeviceInfo, DeviceStatus, RecordInfo, …). */
  readonly cmdType: string;
  /** The decoded Response body, field names as the MANSCDP codecs spell them; `sn` is the upstream's. */
  readonly response: { readonly sn: string; readonly [field: string]: JsonValue | undefined };
}

export interface CascadePayloads {
  'notify.catalog': CatalogNotifyPayload;
  'notify.alarm': AlarmNotifyPayload;
  'notify.mobilePosition': MobilePositionNotifyPayload;
  'control.upstream': UpstreamControlPayload;
  'response.upstream': UpstreamResponsePayload;
}

export type CascadeEventKind = keyof CascadePayloads;
export const CASCADE_EVENT_KINDS: readonly CascadeEventKind[] = ['notify.catalog', 'notify.alarm', 'notify.mobilePosition', 'control.upstream', 'response.upstream'];

/** What a trigger publishes: the kind and its payload. */
export type CascadeEventData = { [K in CascadeEventKind]: { readonly kind: K; readonly payload: CascadePayloads[K] } }[CascadeEventKind];

export interface CascadeEnvelope {
  readonly v: typeof CASCADE_EVENT_VERSION;
  /** Unique per event (logs, de-duplication by a consumer that wants it). */
  readonly id: string;
  /** instance-id of the publisher. */
  readonly origin: string;
  /** Publisher's clock, epoch ms. */
  readonly at: number;
}

/** An event as delivered: envelope + kind + payload. */
export type CascadeEvent = CascadeEnvelope & CascadeEventData;

/** Helper for the control payload: raw bytes in, base64 out (and back). */
export function encodeRawRequest(raw: Uint8Array | string): string {
  return (typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw)).toString('base64');
}

export function decodeRawRequest(payload: UpstreamControlPayload): Buffer {
  return Buffer.from(payload.request, 'base64');
}
