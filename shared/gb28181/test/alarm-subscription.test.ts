// Query/Alarm (the body of an alarm SUBSCRIBE, GB/T 28181-2016 §9.11, §A.2.4) and AlarmCmd reset
// (§A.2.3): expected text written by hand from the standard's element names.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildAlarmQuery, buildDeviceControl, decodeAlarmQuery, decodeDeviceControl, deviceControlForAction, parseManscdp } from '../src/index.ts';

describe('alarm subscription body and alarm reset', () => {
  it('builds Query/Alarm with priorities, method and time range in the standard’s element names', () => {
    const body = buildAlarmQuery(
      { sn: '17', deviceId: '34020000001320000001', startAlarmPriority: '0', endAlarmPriority: '0', alarmMethod: '0', startAlarmTime: '2026-12-01T00:00:00' },
      { charset: 'UTF-8' },
    ).toString('utf8');
    assert.match(body, /<Query>/);
    assert.match(body, /<CmdType>Alarm<\/CmdType>/);
    assert.match(body, /<SN>17<\/SN>/);
    assert.match(body, /<DeviceID>34020000001320000001<\/DeviceID>/);
    assert.match(body, /<StartAlarmPriority>0<\/StartAlarmPriority>/);
    assert.match(body, /<EndAlarmPriority>0<\/EndAlarmPriority>/);
    assert.match(body, /<AlarmMethod>0<\/AlarmMethod>/);
    assert.match(body, /<StartAlarmTime>2026-12-01T00:00:00<\/StartAlarmTime>/);
    assert.doesNotMatch(body, /EndAlarmTime|AlarmType/, 'absent fields are not written');
    const back = decodeAlarmQuery(parseManscdp(body));
    assert.deepEqual(back, { sn: '17', deviceId: '34020000001320000001', startAlarmPriority: '0', endAlarmPriority: '0', alarmMethod: '0', startAlarmTime: '2026-12-01T00:00:00' });
  });

  it('resetalarm is AlarmCmd ResetAlarm', () => {
    const body = buildDeviceControl({ sn: '3', deviceId: '34020000001320000001', command: deviceControlForAction('resetalarm') });
    assert.match(body.toString('latin1'), /<AlarmCmd>ResetAlarm<\/AlarmCmd>/);
    assert.deepEqual(decodeDeviceControl(parseManscdp(body)).command, { type: 'AlarmCmd', value: 'ResetAlarm' });
  });
});
