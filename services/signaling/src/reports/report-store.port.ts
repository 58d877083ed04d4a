// What devices report on their own (GB/T 28181-2016 §9.4 alarms, §9.11 mobile positions) and which
// subscriptions the platform holds to them (§9.11), kept per device with a bounded history (SPEC §8
// "alarms … and mobile positions with bounded history", SEC-3 bounds). Adapters: memory (standalone,
// embedded store) and MySQL (cluster, V008), both `satisfies ReportStore`.
import type { DeviceId, Page, PageRequest } from '../devices/device.types.ts';

export interface AlarmRecord {
  /** Store-assigned, increasing per store: newest first means highest id first. */
  readonly id: number;
  readonly deviceId: DeviceId;
  /** The alarm source named in the body (the device or one of its channels / alarm inputs). */
  readonly sourceId: string;
  /** Epoch ms the platform received it. */
  readonly receivedAt: number;
  /** AlarmPriority 1..4 (§A.2.5). */
  readonly priority: string;
  /** AlarmMethod 1 phone, 2 device, 3 SMS, 4 GPS, 5 video, 6 device fault, 7 other. */
  readonly method: string;
  readonly type: string | null;
  /** AlarmTime as the device wrote it (GB wall clock). */
  readonly alarmTime: string | null;
  readonly description: string | null;
  readonly longitude: string | null;
  readonly latitude: string | null;
  /** How it came: a MESSAGE (§9.4) or a NOTIFY under our alarm subscription. */
  readonly via: 'message' | 'notify';
}

export type AlarmInput = Omit<AlarmRecord, 'id'>;

export interface AlarmQuery {
  readonly deviceId: DeviceId;
  /** Received-at range, epoch ms, inclusive. */
  readonly from?: number;
  readonly to?: number;
  readonly method?: string;
  readonly type?: string;
  readonly priority?: string;
}

export interface PositionRecord {
  readonly deviceId: DeviceId;
  /** The positioned source named in the body (device or channel). */
  readonly sourceId: string;
  readonly receivedAt: number;
  /** GPS time as the device wrote it. */
  readonly time: string;
  /** Coordinates kept as strings: `116.397000` must come back as sent. */
  readonly longitude: string;
  readonly latitude: string;
  readonly speed: string | null;
  readonly direction: string | null;
  readonly altitude: string | null;
}

export interface TrackQuery {
  readonly deviceId: DeviceId;
  readonly from?: number;
  readonly to?: number;
}

export const SUBSCRIPTION_KINDS = ['catalog', 'alarm', 'mobileposition'] as const;
export type DeviceSubscriptionKind = (typeof SUBSCRIPTION_KINDS)[number];

/** Which subscriptions the platform keeps to a device; read by whichever instance owns it. */
export interface SubscriptionSettings {
  readonly catalog: boolean;
  readonly alarm: boolean;
  readonly mobileposition: boolean;
  /** MobilePosition report interval asked for, seconds (§A.2.4 `Interval`). */
  readonly intervalS: number;
}

export const NO_SUBSCRIPTIONS: SubscriptionSettings = { catalog: false, alarm: false, mobileposition: false, intervalS: 5 };

/** Default bounds: enough for a busy camera's day, a few tens of MB at most in memory. */
export interface ReportBounds {
  readonly alarmsPerDevice: number;
  readonly alarmsTotal: number;
  readonly positionsPerDevice: number;
  readonly positionsTotal: number;
  /** Devices with stored subscription settings. */
  readonly settingsTotal: number;
}

export const DEFAULT_REPORT_BOUNDS: ReportBounds = {
  alarmsPerDevice: 1000,
  alarmsTotal: 100_000,
  positionsPerDevice: 5000,
  positionsTotal: 200_000,
  settingsTotal: 100_000,
};

export interface ReportStore {
  addAlarm(alarm: AlarmInput): Promise<AlarmRecord>;
  /** Newest first. */
  listAlarms(query: AlarmQuery, page: PageRequest): Promise<Page<AlarmRecord>>;
  addPosition(position: PositionRecord): Promise<void>;
  latestPosition(deviceId: DeviceId): Promise<PositionRecord | null>;
  /** Oldest first (a track is drawn in time order). */
  track(query: TrackQuery, page: PageRequest): Promise<Page<PositionRecord>>;
  subscriptionSettings(deviceId: DeviceId): Promise<SubscriptionSettings>;
  saveSubscriptionSettings(deviceId: DeviceId, settings: SubscriptionSettings): Promise<void>;
  close(): Promise<void>;
}
