// Per-channel catalog changes (catalog-changes.ts): what the cascade passes upstream as ADD / DEL /
// UPDATE / ON / OFF (SPEC CASC-3). Hand-written stored and reported channels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Channel, ChannelInput } from '../devices/device.types.ts';
import { changesOfNotify, diffChannels } from './catalog-changes.ts';

const input = (channelId: string, o: Partial<ChannelInput> = {}): ChannelInput => ({
  channelId, name: 'Gate', manufacturer: null, model: null, owner: null, civilCode: null, address: null,
  parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: 1, extra: { Secrecy: '0', Block: 'b' }, ...o,
});
const stored = (c: ChannelInput): Channel => ({ ...c, deviceId: '34020000001320000001', updatedAt: 1 });

describe('catalog changes', () => {
  it('sync against the stored channels: ADD new, UPDATE changed, ON/OFF status only, nothing unchanged, DEL missing when complete', () => {
    const before = [input('c1'), input('c2'), input('c3'), input('c4')].map(stored);
    const reported = [
      input('c1'), // unchanged (extra in another order is the same)
      input('c2', { name: 'Gate 2' }),
      input('c3', { status: 'OFF' }),
      input('c5'),
    ];
    reported[0] = { ...reported[0]!, extra: { Block: 'b', Secrecy: '0' } };
    assert.deepEqual(diffChannels(before, reported, true), [
      { channelId: 'c2', event: 'UPDATE' },
      { channelId: 'c3', event: 'OFF' },
      { channelId: 'c5', event: 'ADD' },
      { channelId: 'c4', event: 'DEL' },
    ]);
    assert.deepEqual(diffChannels(before, reported, false).map((c) => c.event), ['UPDATE', 'OFF', 'ADD'], 'a partial answer deletes nothing');
    assert.deepEqual(diffChannels([], [input('c1'), input('c1')], false), [{ channelId: 'c1', event: 'ADD' }], 'a channel listed twice counts once');
  });

  it('a Catalog Notify keeps the device’s own events; none (or an unknown one) is an UPDATE', () => {
    const items = [
      { deviceId: 'a', event: 'ADD' },
      { deviceId: 'b', event: 'DEL' },
      { deviceId: 'c', event: 'VLOST' },
      { deviceId: 'd' },
      { deviceId: 'e', event: 'MOVE' },
    ];
    assert.deepEqual(changesOfNotify(items).map((c) => `${c.channelId}:${c.event}`), ['a:ADD', 'b:DEL', 'c:VLOST', 'd:UPDATE', 'e:UPDATE']);
  });
});
