// Device-side triggers of cascade NOTIFYs (SPEC CASC-3): a device's shared channels go ON/OFF when it
// comes online / goes offline; channels a catalog notify or sync added, deleted, updated or switched
// ON/OFF (ADD / DEL / UPDATE / ON / OFF…, `catalogChanged.changes`); alarms; mobile positions. Each becomes a cascade action carried by
// value (the channel snapshot, the whole alarm) and handed to `route`, which runs it here when this
// instance is the leader and publishes it otherwise. Never throws into the device side (CASC-4):
// listeners only start async work and log its failure.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PlatformRepository } from '@vms/cascade';
import type { CascadeEventData, CatalogChannelSnapshot } from '@vms/cluster';
import type { Logger } from 'pino';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { Channel } from '../devices/device.types.ts';
import type { DeviceEventMap, DeviceEvents } from '../events/device-events.ts';
import { itemFromChannel } from './channel-items.ts';

/** Shares read per device when it goes on/offline (a GB NVR has at most a few hundred channels, each shared with a few platforms). */
const MAX_SHARES_PER_DEVICE = 8000;

export interface CascadeTriggersOptions {
  readonly events: DeviceEvents;
  readonly devices: DeviceRepository;
  readonly platforms: PlatformRepository;
  /** Executes here or publishes (routeCascadeAction at the trigger). Must not throw. */
  readonly route: (data: CascadeEventData) => void;
  readonly log: Logger;
}

/** JSON-safe copy: undefined fields dropped (the bus carries plain JSON). */
function plain<T extends object>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * Changes looked at per turn of the event loop. The stores answer from memory or SQLite without any I/O,
 * so the awaits alone never yield: a 13,504-channel catalog change was one long block of the loop in the
 * catalog flood (SPEC SEC-3: at most 50 ms per input).
 */
export const CHANGES_PER_TURN = 1000;

/** Subscribes to the device events; returns the unsubscribe function. */
export function attachCascadeTriggers(o: CascadeTriggersOptions): () => void {
  const log = o.log.child({ component: 'cascade-triggers' });

  // From the shares, not from the device's channels: a device nothing upstream receives (every device of
  // a registration storm, usually) costs one empty indexed query instead of a channel page plus a share
  // query per channel (issue 11 profile: 3 % of a storm's CPU); only shared channels are read.
  const channelsOnOff = async (deviceId: string, event: 'ON' | 'OFF'): Promise<void> => {
    const shares = await o.platforms.sharesOfDevice(deviceId, MAX_SHARES_PER_DEVICE);
    let last: string | undefined;
    for (const share of shares) {
      if (share.channelId === last) continue; // ordered by channel: one notify per channel, the route fans out
      last = share.channelId;
      const c = await o.devices.getChannel(deviceId, share.channelId);
      if (c === null) continue; // shared but not (or no longer) reported by the device
      const channel = plain({ ...itemFromChannel(c), status: event }) as unknown as CatalogChannelSnapshot;
      o.route({ kind: 'notify.catalog', payload: { event, deviceId, channel } });
    }
  };
  // ADD / UPDATE / ON / OFF carry the channel as the device reported it (the event's data, by value);
  // DEL carries only its id (GB/T 28181-2016 §A.2.5: DeviceID and Event suffice). Shares are kept on
  // DEL: a channel the device reports again is ADDed to the same upstreams.
  const catalogChanges = async (e: DeviceEventMap['catalogChanged']): Promise<void> => {
    const last = new Map(e.changes.map((c) => [c.channelId, c.event]));
    const reported = new Map(e.channels.map((c) => [c.channelId, c]));
    let seen = 0;
    for (const [channelId, event] of last) {
      if (++seen % CHANGES_PER_TURN === 0) await nextTurn();
      if ((await o.platforms.sharesOf(e.deviceId, channelId)).length === 0) continue;
      let snapshot: CatalogChannelSnapshot;
      if (event === 'DEL') snapshot = { deviceId: channelId };
      else {
        const input = reported.get(channelId);
        const c: Channel | null = input === undefined ? await o.devices.getChannel(e.deviceId, channelId) : { ...input, deviceId: e.deviceId, updatedAt: e.at };
        if (c === null) continue;
        snapshot = plain(itemFromChannel(c)) as unknown as CatalogChannelSnapshot;
      }
      o.route({ kind: 'notify.catalog', payload: { event, deviceId: e.deviceId, channel: snapshot } });
    }
  };
  const run = (what: string, deviceId: string, work: Promise<void>): void => {
    work.catch((err: unknown) => log.warn({ err, deviceId, trigger: what }, 'cascade trigger failed'));
  };

  const offs = [
    o.events.on('online', (e) => run('online', e.deviceId, channelsOnOff(e.deviceId, 'ON'))),
    o.events.on('offline', (e) => run('offline', e.deviceId, channelsOnOff(e.deviceId, 'OFF'))),
    o.events.on('catalogChanged', (e) => run('catalog', e.deviceId, catalogChanges(e))),
    o.events.on('alarm', (e) => {
      const { sn: _sn, ...alarm } = e.alarm;
      o.route({ kind: 'notify.alarm', payload: { deviceId: e.deviceId, alarm: plain(alarm) } });
    }),
    o.events.on('mobilePosition', (e) => {
      const { sn: _sn, ...position } = e.position;
      o.route({ kind: 'notify.mobilePosition', payload: { deviceId: e.deviceId, position: plain(position) } });
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
