// API shapes of domain records. Passwords never leave the service; times are ISO-8601 UTC.
import type { Channel, Device, Page } from '../devices/device.types.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function deviceView(d: Device, ownerNode: string | null) {
  return {
    deviceId: d.deviceId,
    tenantId: d.tenantId,
    name: d.name,
    manufacturer: d.manufacturer,
    model: d.model,
    firmware: d.firmware,
    transport: d.transport,
    charset: d.charset,
    hasPassword: d.password !== null,
    remoteIp: d.remoteIp,
    remotePort: d.remotePort,
    registeredAt: iso(d.registeredAt),
    keepaliveAt: iso(d.keepaliveAt),
    expiresSec: d.expiresSec,
    online: d.online,
    ownerNode: d.online ? ownerNode : null,
    channelCount: d.channelCount,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
  };
}

export function channelView(c: Channel) {
  return { ...c, updatedAt: iso(c.updatedAt) };
}

/** BladeX / MyBatis-Plus page shape, which the reference front ends read. */
export function pageView<T, V>(page: Page<T>, view: (item: T) => V) {
  return {
    records: page.items.map(view),
    total: page.total,
    size: page.size,
    current: page.page,
    pages: Math.ceil(page.total / page.size),
  };
}
