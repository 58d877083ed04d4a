// Catalog answer assembly and item → channel mapping, on bodies shaped like the captures
// (05 Ellean, 07 sbgb28181) with hand-checked expectations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { turnsDuring } from '@vms/harness';
import { parseManscdpCommand, type CatalogResponse } from '@vms/gb28181';
import { createCatalogAssembly } from '../../src/sip/catalog-assembler.ts';
import { channelFromItem, channelsFromItems, changesFromNotify, ITEMS_PER_TURN } from '../../src/sip/catalog-channels.ts';

const DEV = '34020000001320000001';

const item = (n: number, extra = ''): string =>
  `<Item><DeviceID>3402000000131000000${n}</DeviceID><Name>ch${n}</Name><Manufacturer>SimCamera</Manufacturer><Model>SC-2000</Model>` +
  `<Owner>Owner</Owner><CivilCode>340200000</CivilCode><Address>Address</Address><Parental>0</Parental><ParentID>${DEV}</ParentID>` +
  `<SafetyWay>0</SafetyWay><RegisterWay>1</RegisterWay><Secrecy>0</Secrecy><Status>ON</Status>${extra}</Item>`;

function page(sumNum: number, items: string[]): CatalogResponse {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\r\n<Response><CmdType>Catalog</CmdType><SN>101</SN><DeviceID>${DEV}</DeviceID>` +
    `<SumNum>${sumNum}</SumNum><DeviceList Num="${items.length}">${items.join('')}</DeviceList></Response>`;
  const cmd = parseManscdpCommand(Buffer.from(body));
  assert.equal(cmd.kind, 'Response/Catalog');
  return cmd.body as CatalogResponse;
}

describe('catalog assembly', () => {
  it('completes when SumNum distinct items arrived over several MESSAGEs', () => {
    const a = createCatalogAssembly();
    assert.equal(a.partial(), undefined, 'nothing yet: a timeout is a failure');
    assert.equal(a.add(page(3, [item(1), item(2)])), false);
    assert.deepEqual([a.total, a.received], [3, 2]);
    assert.equal(a.add(page(3, [item(2)])), false, 'a resent item counts once');
    assert.equal(a.add(page(3, [item(3)])), true);
    const r = a.result();
    assert.equal(r.complete, true);
    assert.deepEqual(r.items.map((i) => i.deviceId), ['34020000001310000001', '34020000001310000002', '34020000001310000003']);
  });

  it('a wait that ends early keeps what arrived, flagged incomplete', () => {
    const a = createCatalogAssembly();
    a.add(page(4, [item(1), item(2)]));
    const r = a.partial();
    assert.deepEqual(r && { complete: r.complete, total: r.total, n: r.items.length }, { complete: false, total: 4, n: 2 });
  });

  it('SumNum 0 is a complete, empty catalog', () => {
    const a = createCatalogAssembly();
    assert.equal(a.add(page(0, [])), true);
    assert.deepEqual(a.result().items, []);
  });
});

describe('catalog items as channels', () => {
  it('maps the Ellean item (sample 05) field by field', () => {
    const [ch] = page(1, [item(1, '<Longitude>120.1234</Longitude><Latitude>30.5</Latitude><Info><PTZType>1</PTZType></Info><Online>true</Online>')]).items;
    assert.ok(ch !== undefined);
    assert.deepEqual(channelFromItem(ch), {
      channelId: '34020000001310000001',
      name: 'ch1',
      manufacturer: 'SimCamera',
      model: 'SC-2000',
      owner: 'Owner',
      civilCode: '340200000',
      address: 'Address',
      parentId: DEV,
      parental: false,
      status: 'ON',
      longitude: 120.1234,
      latitude: 30.5,
      ptzType: 1,
      extra: { SafetyWay: '0', RegisterWay: '1', Secrecy: '0', Online: 'true' },
    });
  });

  it('maps the minimal sbgb28181 item (sample 07): absent fields are null, no Status is OFF', () => {
    const body =
      "<?xml version='1.0' encoding='GB2312'?><Response><CmdType>Catalog</CmdType><SN>1</SN><DeviceID>34020000001320000009</DeviceID><SumNum>1</SumNum>" +
      '<DeviceList><Item><DeviceID>34020000001310000009</DeviceID><Name>ch1</Name><Manufacturer>StrawberryInno</Manufacturer><Model>v1</Model><Status>ON</Status></Item>' +
      '<Item><DeviceID>34020000001310000010</DeviceID><Longitude>east</Longitude></Item></DeviceList></Response>';
    const cmd = parseManscdpCommand(Buffer.from(body));
    const [a, b] = (cmd.body as CatalogResponse).items.map((i) => channelFromItem(i));
    assert.deepEqual([a?.status, a?.parentId, a?.parental, a?.ptzType, a?.extra], ['ON', null, false, null, {}]);
    assert.deepEqual([b?.status, b?.name, b?.longitude], ['OFF', null, null]);
  });

  it('sorts Catalog Notify events: DEL removes, ON/OFF/VLOST/DEFECT change status, ADD/UPDATE upsert', () => {
    const items = ['ADD', 'UPDATE', 'DEL', 'ON', 'OFF', 'VLOST', 'DEFECT'].map((event, i) => ({ deviceId: `3402000000131000001${i}`, event, name: 'x', status: 'ON' }));
    const changes = changesFromNotify(items);
    assert.deepEqual(changes.upserts.map((c) => c.channelId), ['34020000001310000010', '34020000001310000011']);
    assert.deepEqual(changes.removed, ['34020000001310000012']);
    assert.deepEqual(
      changes.statusChanges.map((c) => [c.item.deviceId, c.status]),
      [
        ['34020000001310000013', 'ON'],
        ['34020000001310000014', 'OFF'],
        ['34020000001310000015', 'OFF'],
        ['34020000001310000016', 'OFF'],
      ],
    );
  });
});

describe('a whole answer as channels (SPEC SEC-3: no long block of the event loop)', () => {
  it(`maps ${ITEMS_PER_TURN * 2 + 500} items in order, ${ITEMS_PER_TURN} per turn of the event loop`, async () => {
    const one = page(1, [item(1)]).items[0];
    assert.ok(one !== undefined);
    const n = ITEMS_PER_TURN * 2 + 500;
    const items = Array.from({ length: n }, (_, i) => ({ ...one, deviceId: `340200000013${String(i).padStart(8, '0')}` }));
    let channels: Awaited<ReturnType<typeof channelsFromItems>> = [];
    const turns = await turnsDuring(async () => {
      channels = await channelsFromItems(items);
    });
    assert.equal(channels.length, n);
    assert.deepEqual(channels[n - 1], channelFromItem(items[n - 1] as typeof one));
    assert.deepEqual(channels.map((c) => c.channelId), items.map((i) => i.deviceId));
    assert.ok(turns >= 2, `the loop turned ${turns} times while mapping`);
  });
});
