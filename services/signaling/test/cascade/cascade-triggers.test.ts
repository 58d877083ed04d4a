// Cascade triggers (src/cascade/cascade-triggers.ts, SPEC CASC-3): a device's catalog changes become
// catalog NOTIFY actions — by value, for shared channels only, with the device's event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countLoopTurns, type LoopTurns } from '@vms/harness';
import { createMemoryPlatformRepository, upstreamPlatform } from '@vms/cascade';
import type { CascadeEventData } from '@vms/cluster';
import { pino } from 'pino';
import { attachCascadeTriggers, CHANGES_PER_TURN } from '../../src/cascade/cascade-triggers.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import type { ChannelInput } from '../../src/devices/device.types.ts';
import { createDeviceEvents } from '../../src/events/device-events.ts';

const log = pino({ level: 'silent' });
const DEVICE = '34020000001320000001';
const [C1, C2, C3, C4] = ['34020000001310000001', '34020000001310000002', '34020000001310000003', '34020000001310000004'];
const channel = (channelId: string, name = 'Gate'): ChannelInput => ({
  channelId, name, manufacturer: null, model: null, owner: null, civilCode: null, address: null,
  parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: 1, extra: {},
});

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('cascade triggers: catalog changes', () => {
  it('ADD / UPDATE / DEL of shared channels are routed by value; unshared channels are not', async () => {
    const events = createDeviceEvents(log);
    const devices = createMemoryDeviceRepository();
    await devices.registerDevice({ deviceId: DEVICE, transport: 'UDP', remoteIp: '127.0.0.1', remotePort: 5060, expiresSec: 3600, at: 1 });
    await devices.replaceChannels(DEVICE, [channel(C1), channel(C2, 'Renamed'), channel(C4)], 2);
    const platforms = createMemoryPlatformRepository();
    await platforms.upsert(upstreamPlatform({ serverId: '34010000002000000001', host: '127.0.0.1', port: 5060, localId: '34020000002000000001' }));
    await platforms.shareChannels(
      '34010000002000000001',
      [C1, C2, C3].map((channelId) => ({ deviceId: DEVICE, channelId, catalogGroupId: null, parentId: null })),
    );
    const routed: CascadeEventData[] = [];
    const detach = attachCascadeTriggers({ events, devices, platforms, route: (d) => routed.push(d), log });
    events.emit('catalogChanged', {
      deviceId: DEVICE,
      at: 3,
      source: 'notify',
      complete: false,
      channels: [channel(C1), channel(C2, 'Renamed'), channel(C4)],
      removed: [C3],
      changes: [
        { channelId: C1, event: 'ADD' },
        { channelId: C2, event: 'UPDATE' },
        { channelId: C3, event: 'DEL' },
        { channelId: C4, event: 'ADD' }, // not shared
      ],
    });
    await until(() => routed.length >= 3, 'three notify actions');
    await new Promise((r) => setTimeout(r, 20));
    detach();
    assert.deepEqual(
      routed.map((d) => (d.kind === 'notify.catalog' ? [d.payload.event, d.payload.deviceId, d.payload.channel.deviceId, d.payload.channel.name ?? null] : d.kind)),
      [
        ['ADD', DEVICE, C1, 'Gate'],
        ['UPDATE', DEVICE, C2, 'Renamed'],
        ['DEL', DEVICE, C3, null],
      ],
    );
    // by value: plain JSON, what the bus carries
    for (const d of routed) assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
    events.emit('catalogChanged', { deviceId: DEVICE, at: 4, source: 'sync', complete: true, channels: [], removed: [], changes: [] });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(routed.length, 3, 'detached');
  });
});

describe('cascade triggers: a large catalog change (SPEC SEC-3: no long block of the event loop)', () => {
  it(`${CHANGES_PER_TURN * 2 + 500} changed shared channels: routed in order, with turns of the event loop between`, async () => {
    const n = CHANGES_PER_TURN * 2 + 500;
    const ids = Array.from({ length: n }, (_, i) => `340200000013${String(i).padStart(8, '0')}`);
    const events = createDeviceEvents(log);
    const devices = createMemoryDeviceRepository();
    const platforms = createMemoryPlatformRepository();
    await platforms.upsert(upstreamPlatform({ serverId: '34010000002000000001', host: '127.0.0.1', port: 5060, localId: '34020000002000000001' }));
    await platforms.shareChannels('34010000002000000001', ids.map((channelId) => ({ deviceId: DEVICE, channelId, catalogGroupId: null, parentId: null })));
    let loop: LoopTurns | undefined;
    const routedAt: number[] = [];
    const routedIds: string[] = [];
    const detach = attachCascadeTriggers({
      events, devices, platforms, log,
      route: (d) => {
        routedAt.push(loop?.turns ?? 0);
        if (d.kind === 'notify.catalog') routedIds.push(d.payload.channel.deviceId);
      },
    });
    loop = countLoopTurns();
    events.emit('catalogChanged', {
      deviceId: DEVICE, at: 3, source: 'sync', complete: false,
      channels: ids.map((id) => channel(id)), removed: [], changes: ids.map((channelId) => ({ channelId, event: 'ADD' as const })),
    });
    await until(() => routedAt.length === n, `${n} notify actions`);
    loop.stop();
    detach();
    assert.deepEqual(routedIds, ids);
    const first = routedAt[0] ?? 0;
    const lastTurn = routedAt.at(-1) ?? 0;
    assert.ok(lastTurn - first >= 2, `the loop turned ${lastTurn - first} times between the first and the last action`);
  });
});

describe('cascade triggers: online / offline', () => {
  it('ON / OFF for the shared channels the device reported, once per channel, in channel order; nothing for an unshared device', async () => {
    const events = createDeviceEvents(log);
    const devices = createMemoryDeviceRepository();
    const OTHER = '34020000001320000002';
    for (const deviceId of [DEVICE, OTHER]) await devices.registerDevice({ deviceId, transport: 'UDP', remoteIp: '127.0.0.1', remotePort: 5060, expiresSec: 3600, at: 1 });
    await devices.replaceChannels(DEVICE, [channel(C1), channel(C2, 'Yard'), channel(C4)], 2);
    await devices.replaceChannels(OTHER, [channel(C1)], 2);
    const platforms = createMemoryPlatformRepository();
    for (const serverId of ['34010000002000000001', '35010000002000000001']) {
      await platforms.upsert(upstreamPlatform({ serverId, host: '127.0.0.1', port: 5060, localId: '34020000002000000001' }));
      // C3 shared but never reported by the device: no notify for it
      await platforms.shareChannels(serverId, [C2, C1, C3].map((channelId) => ({ deviceId: DEVICE, channelId, catalogGroupId: null, parentId: null })));
    }
    const routed: CascadeEventData[] = [];
    const detach = attachCascadeTriggers({ events, devices, platforms, route: (d) => routed.push(d), log });
    events.emit('online', { deviceId: OTHER, at: 3, reason: 'register' });
    events.emit('online', { deviceId: DEVICE, at: 3, reason: 'register' });
    await until(() => routed.length >= 2, 'two ON actions');
    events.emit('offline', { deviceId: DEVICE, at: 4, reason: 'unregister' });
    await until(() => routed.length >= 4, 'two OFF actions');
    await new Promise((r) => setTimeout(r, 20));
    detach();
    assert.deepEqual(
      routed.map((d) => (d.kind === 'notify.catalog' ? [d.payload.event, d.payload.deviceId, d.payload.channel.deviceId, d.payload.channel.name ?? null, d.payload.channel.status ?? null] : d.kind)),
      [
        ['ON', DEVICE, C1, 'Gate', 'ON'],
        ['ON', DEVICE, C2, 'Yard', 'ON'],
        ['OFF', DEVICE, C1, 'Gate', 'OFF'],
        ['OFF', DEVICE, C2, 'Yard', 'OFF'],
      ],
    );
  });
});
