import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManscdp } from '@vms/gb28181';
import { upstreamPlatform } from '../platform/platform.validate.ts';
import { platformDeviceInfoAnswer, platformDeviceStatusAnswer, routeUpstreamMessage } from './platform-answers.ts';

const LOCAL = '34020000002000000001';
const p = upstreamPlatform({ serverId: '34010000002000000001', host: '10.1.2.3', localId: LOCAL, catalog: { groupId: '34020000002160000001', groupName: null } });
const identity = { deviceName: 'VMS', manufacturer: 'vms', model: 'signaling', firmware: '0.1.0' };

/** Query bodies as the captured upper platform sends them (sample 16: UTF-8, standalone, indented). */
const query = (cmdType: string, deviceId: string, root = 'Query'): string =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<${root}>\n  <CmdType>${cmdType}</CmdType>\n  <SN>0</SN>\n  <DeviceID>${deviceId}</DeviceID>\n</${root}>\n`;

describe('answers about the platform itself', () => {
  it('DeviceInfo: exact body, query SN echoed, shared channel count', () => {
    assert.equal(
      platformDeviceInfoAnswer(p, { sn: '0', deviceId: LOCAL }, identity, 12).toString('latin1'),
      '<?xml version="1.0" encoding="GB2312"?>\r\n<Response>\n<CmdType>DeviceInfo</CmdType>\n<SN>0</SN>\n' +
        `<DeviceID>${LOCAL}</DeviceID>\n<DeviceName>VMS</DeviceName>\n<Result>OK</Result>\n<Manufacturer>vms</Manufacturer>\n` +
        '<Model>signaling</Model>\n<Firmware>0.1.0</Firmware>\n<Channel>12</Channel>\n</Response>\r\n',
    );
  });

  it('DeviceStatus: online, OK, device time in China Standard Time by default', () => {
    const body = platformDeviceStatusAnswer(p, { sn: '1', deviceId: LOCAL }, new Date('2026-01-01T00:00:00Z')).toString('latin1');
    assert.equal(
      body,
      '<?xml version="1.0" encoding="GB2312"?>\r\n<Response>\n<CmdType>DeviceStatus</CmdType>\n<SN>1</SN>\n' +
        `<DeviceID>${LOCAL}</DeviceID>\n<Result>OK</Result>\n<Online>ONLINE</Online>\n<Status>OK</Status>\n` +
        '<DeviceTime>2026-01-01T08:00:00</DeviceTime>\n</Response>\r\n',
    );
  });
});

describe('routeUpstreamMessage', () => {
  it('queries about us (or our group) are answered here', () => {
    assert.deepEqual(routeUpstreamMessage(p, parseManscdp(query('Catalog', LOCAL))), { kind: 'catalog-query', query: { sn: '0', deviceId: LOCAL } });
    assert.deepEqual(routeUpstreamMessage(p, parseManscdp(query('catalog', '34020000002160000001'))).kind, 'catalog-query');
    assert.equal(routeUpstreamMessage(p, parseManscdp(query('DeviceInfo', LOCAL))).kind, 'device-info-query');
    assert.equal(routeUpstreamMessage(p, parseManscdp(query('DeviceStatus', LOCAL))).kind, 'device-status-query');
    assert.equal(routeUpstreamMessage(p, parseManscdp(query('RecordInfo', LOCAL))).kind, 'unsupported');
    assert.equal(routeUpstreamMessage(p, parseManscdp(query('DeviceControl', LOCAL, 'Control'))).kind, 'unsupported');
  });

  it('anything for one of our channels goes to its owner', () => {
    const ptz = '<?xml version="1.0"?><Control><CmdType>DeviceControl</CmdType><SN>11</SN><DeviceID>34020000001310000001</DeviceID>' +
      '<PTZCmd>A50F01021F0000D6</PTZCmd></Control>';
    assert.deepEqual(routeUpstreamMessage(p, parseManscdp(ptz)), { kind: 'for-device', targetDeviceId: '34020000001310000001' });
    assert.deepEqual(routeUpstreamMessage(p, parseManscdp(query('RecordInfo', '34020000001310000001'))).kind, 'for-device');
  });
});
