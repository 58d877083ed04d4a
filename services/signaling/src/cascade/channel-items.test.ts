import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Channel } from '../devices/device.types.ts';
import { channelFromItem } from '../sip/catalog-channels.ts';
import { itemFromChannel } from './channel-items.ts';

const stored: Channel = {
  deviceId: '34020000001320000001',
  channelId: '34020000001310000001',
  name: 'Gate',
  manufacturer: 'Hik',
  model: null,
  owner: 'Owner',
  civilCode: '340200',
  address: null,
  parentId: '34020000001320000001',
  parental: false,
  status: 'ON',
  longitude: 120.5,
  latitude: null,
  ptzType: 1,
  extra: { SafetyWay: '0', RegisterWay: '1', Secrecy: '0', Vendor: 'x' },
  updatedAt: 0,
};

describe('itemFromChannel', () => {
  it('maps the stored columns and the GB tags kept in extra back to item fields (hand-checked)', () => {
    assert.deepEqual(itemFromChannel(stored), {
      deviceId: '34020000001310000001',
      parental: '0',
      status: 'ON',
      name: 'Gate',
      manufacturer: 'Hik',
      owner: 'Owner',
      civilCode: '340200',
      parentId: '34020000001320000001',
      longitude: '120.5',
      ptzType: '1',
      safetyWay: '0',
      registerWay: '1',
      secrecy: '0',
    });
  });

  it('round-trips through channelFromItem for the modelled fields', () => {
    const back = channelFromItem(itemFromChannel(stored));
    assert.equal(back.channelId, stored.channelId);
    assert.equal(back.status, 'ON');
    assert.equal(back.longitude, 120.5);
    assert.equal(back.ptzType, 1);
    assert.deepEqual(back.extra, { SafetyWay: '0', RegisterWay: '1', Secrecy: '0' });
  });
});
