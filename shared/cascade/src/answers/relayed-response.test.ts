import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCatalogResponse, decodeManscdpCommand, parseManscdp } from '@vms/gb28181';
import { upstreamPlatform } from '../platform/platform.validate.ts';
import { RELAYED_QUERY_TYPES, relayedResponseBody } from './relayed-response.ts';

const p = upstreamPlatform({ serverId: '34010000002000000001', host: '10.1.2.3', localId: '34020000002000000001', catalog: { groupId: '34020000002160000001', groupName: null } });
const CAM = '34020000001320000001';

describe('a device Response relayed to an upstream', () => {
  it('a UTF-8 Catalog page from the device goes out in the upstream charset (GB2312), with the SN given and the items intact', () => {
    const fromDevice = buildCatalogResponse(
      { sn: '7001', deviceId: CAM, sumNum: 2, items: [{ deviceId: '34020000001310000001', name: '东门', status: 'ON' }] },
      { charset: 'UTF-8' },
    );
    const decoded = decodeManscdpCommand(parseManscdp(fromDevice));
    assert.equal(decoded.kind, 'Response/Catalog');
    const body = relayedResponseBody(p, 'Catalog', { ...decoded.body, sn: '42' });
    assert.ok(body !== undefined);
    assert.match(body.toString('latin1'), /encoding="GB2312"/);
    assert.ok(body.includes(Buffer.from([0xb6, 0xab, 0xc3, 0xc5])), '东门 in GB2312 bytes');
    const back = decodeManscdpCommand(parseManscdp(body));
    assert.ok(back.kind === 'Response/Catalog');
    assert.deepEqual({ ...back.body, sn: '7001' }, decoded.body);
    assert.equal(back.body.sn, '42');
  });

  it('every decodable query type is relayed; anything else is not', () => {
    assert.deepEqual([...RELAYED_QUERY_TYPES].sort(), ['Catalog', 'ConfigDownload', 'DeviceInfo', 'DeviceStatus', 'PresetQuery', 'RecordInfo']);
    assert.equal(relayedResponseBody(p, 'Broadcast', { sn: '1' }), undefined);
    const info = relayedResponseBody(p, 'DeviceInfo', { sn: '5', deviceId: CAM, result: 'OK', manufacturer: 'Hik' });
    assert.match(info?.toString('latin1') ?? '', /<SN>5<\/SN>[\s\S]*<Manufacturer>Hik<\/Manufacturer>/);
  });
});
