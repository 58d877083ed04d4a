// What a catalog answer or notification changed, channel by channel (GB/T 28181-2016 §9.11, §A.2.5
// events), so that listeners (the cascade's catalog NOTIFYs to upstream platforms, SPEC CASC-3) can
// pass ADD / DEL / UPDATE / ON / OFF on. Pure, but for the two reads below, which cost what they read
// (SPEC SEC-3): the channels a message names, or, for a complete sync, the catalog once by keyset.
import { CATALOG_EVENTS, type CatalogEvent, type CatalogItem } from '@vms/gb28181';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { Channel, ChannelInput, DeviceId } from '../devices/device.types.ts';
import type { ChannelChange } from '../events/device-events.ts';
import { MAX_PAGE_SIZE } from '../devices/paging.ts';

/** Every stored channel of a device, by keyset pages (each page starts where the last ended). */
export async function readAllChannels(devices: Pick<DeviceRepository, 'listChannelsAfter'>, deviceId: DeviceId): Promise<Channel[]> {
  const out: Channel[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await devices.listChannelsAfter(deviceId, after, MAX_PAGE_SIZE);
    out.push(...page);
    const last = page.at(-1);
    if (page.length < MAX_PAGE_SIZE || last === undefined) return out;
    after = last.channelId;
  }
}

/** The stored versions of the channels a message reports: what `diffChannels` needs when not complete. */
export function readReportedChannels(devices: Pick<DeviceRepository, 'getChannels'>, deviceId: DeviceId, reported: readonly ChannelInput[]): Promise<Channel[]> {
  return reported.length === 0 ? Promise.resolve([]) : devices.getChannels(deviceId, reported.map((c) => c.channelId));
}

/** Fields compared for UPDATE (status is reported as ON / OFF on its own). */
function describe(c: ChannelInput | Channel): string {
  const extra = Object.fromEntries(Object.entries(c.extra).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify([c.name, c.manufacturer, c.model, c.owner, c.civilCode, c.address, c.parentId, c.parental, c.longitude, c.latitude, c.ptzType, extra]);
}

/**
 * A catalog answer (sync, or an unsolicited report) against the stored channels: a new channel is an
 * ADD, a changed one an UPDATE (only its status changed: ON / OFF), an unchanged one nothing; with a
 * `complete` catalog, a stored channel it does not list is a DEL. `stored` must hold every stored
 * channel when `complete`, and at least the reported ones otherwise.
 */
export function diffChannels(stored: readonly Channel[], reported: readonly ChannelInput[], complete: boolean): ChannelChange[] {
  const before = new Map(stored.map((c) => [c.channelId, c]));
  const out: ChannelChange[] = [];
  const seen = new Set<string>();
  for (const c of reported) {
    if (seen.has(c.channelId)) continue;
    seen.add(c.channelId);
    const old = before.get(c.channelId);
    if (old === undefined) out.push({ channelId: c.channelId, event: 'ADD' });
    else if (describe(old) !== describe(c)) out.push({ channelId: c.channelId, event: 'UPDATE' });
    else if (old.status !== c.status) out.push({ channelId: c.channelId, event: c.status });
  }
  if (complete) for (const c of stored) if (!seen.has(c.channelId)) out.push({ channelId: c.channelId, event: 'DEL' });
  return out;
}

const isCatalogEvent = (e: string): e is CatalogEvent => (CATALOG_EVENTS as readonly string[]).includes(e);

/** A Catalog Notify's items as the device labelled them; an item without a known event is an UPDATE. */
export function changesOfNotify(items: readonly CatalogItem[]): ChannelChange[] {
  return items.map((i) => ({ channelId: i.deviceId, event: i.event !== undefined && isCatalogEvent(i.event) ? i.event : 'UPDATE' }));
}
