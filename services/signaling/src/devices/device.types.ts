// Domain types of the device store. Times are epoch milliseconds.

export type DeviceId = string;
export type ChannelId = string;
export type TenantId = string;

/** SPEC §12: a device that registers without being provisioned joins this tenant. */
export const DEFAULT_TENANT: TenantId = '000000';

export type Transport = 'UDP' | 'TCP';
export type Charset = 'GB2312' | 'UTF-8';
export type ChannelStatus = 'ON' | 'OFF';

export interface Device {
  readonly deviceId: DeviceId;
  readonly tenantId: TenantId;
  readonly name: string | null;
  readonly manufacturer: string | null;
  readonly model: string | null;
  readonly firmware: string | null;
  /** Transport the device registered over; requests to it use the same. */
  readonly transport: Transport;
  /** Charset of MANSCDP bodies exchanged with this device. */
  readonly charset: Charset;
  /** Per-device digest password; null = use the platform password. */
  readonly password: string | null;
  readonly remoteIp: string | null;
  readonly remotePort: number | null;
  readonly registeredAt: number | null;
  readonly keepaliveAt: number | null;
  /** Registration lifetime granted, seconds. */
  readonly expiresSec: number | null;
  readonly online: boolean;
  readonly channelCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Operator-side provisioning: creates the device or updates these fields of an existing one. */
export interface DeviceProvision {
  readonly deviceId: DeviceId;
  readonly tenantId?: TenantId;
  readonly name?: string | null;
  readonly password?: string | null;
  readonly charset?: Charset;
  readonly transport?: Transport;
}

/** What a successful REGISTER tells us. */
export interface DeviceRegistration {
  readonly deviceId: DeviceId;
  readonly transport: Transport;
  readonly remoteIp: string;
  readonly remotePort: number;
  readonly expiresSec: number;
  readonly at: number;
}

/** What a DeviceInfo response tells us. */
export interface DeviceInfoUpdate {
  readonly name?: string | null;
  readonly manufacturer?: string | null;
  readonly model?: string | null;
  readonly firmware?: string | null;
}

export interface Channel {
  readonly deviceId: DeviceId;
  readonly channelId: ChannelId;
  readonly name: string | null;
  readonly manufacturer: string | null;
  readonly model: string | null;
  readonly owner: string | null;
  readonly civilCode: string | null;
  readonly address: string | null;
  readonly parentId: string | null;
  readonly parental: boolean;
  readonly status: ChannelStatus;
  readonly longitude: number | null;
  readonly latitude: number | null;
  readonly ptzType: number | null;
  /** Catalog item fields not mapped above, verbatim (e.g. SafetyWay, RegisterWay, Secrecy, IPAddress). */
  readonly extra: Readonly<Record<string, string>>;
  readonly updatedAt: number;
}

/** A catalog item as reported by the device. */
export type ChannelInput = Omit<Channel, 'deviceId' | 'updatedAt'>;

export interface PageRequest {
  /** 1-based. */
  readonly page: number;
  readonly size: number;
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly total: number;
  readonly page: number;
  readonly size: number;
}

export interface DeviceFilter extends PageRequest {
  /** Only this tenant's devices; undefined = all tenants (internal use only). */
  readonly tenantId?: TenantId;
  readonly online?: boolean;
  /** Only devices whose id starts with these digits (1-20; GB/T 28181 ids are hierarchical codes, §E). */
  readonly idPrefix?: string;
}
