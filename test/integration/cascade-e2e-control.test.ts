// End-to-end (SPEC CASC-3): a PTZ DeviceControl (then guard, alarm reset, record, reboot) the upstream sends to the cascade leader, for a channel
// of a device owned by another instance, reaches the device from its owner's SIP address (the device
// accepts requests only from where it registered). The raw request crosses on the Redis cascade bus.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultChannelIds } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { MANSCDP, SERVER_ID, shares, UPSTREAM_DOMAIN, UPSTREAM_ID, useCascadeCluster } from './cascade-cluster.ts';

const DEVICE = '34020000001320000401';
/** GB/T 28181-2016 Annex A.3: A5 0F 01, command 02 (left), pan speed 1F, tilt 00, zoom 00, checksum = byte sum mod 256 = D6. */
const PTZ_LEFT = 'A50F01021F0000D6';

describe('DeviceControl from the upstream via the owner (CASC-3)', () => {
  const cluster = useCascadeCluster();

  it('PTZ, guard, alarm reset, record and reboot sent to the leader for a device owned by a non-leader reach the device from its owner', async () => {
    const [channelId] = defaultChannelIds(DEVICE, 1);
    assert.ok(channelId !== undefined);
    const s = await cluster.database('casc_control', shares(DEVICE, [channelId]));
    const leader = await cluster.instance(s, 'casc-ctl-a', { cascade: true });
    const owner = await cluster.instance(s, 'casc-ctl-b');
    await cluster.registered(leader);
    const device = await cluster.device(owner, DEVICE, 1);

    const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Control>\r\n<CmdType>DeviceControl</CmdType>\r\n<SN>901</SN>\r\n<DeviceID>${channelId}</DeviceID>\r\n<PTZCmd>${PTZ_LEFT}</PTZCmd>\r\n</Control>\r\n`;
    const res = await cluster.upstream.stack.request({
      method: 'MESSAGE',
      uri: `sip:${channelId}@127.0.0.1:${leader.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${channelId}@${SERVER_ID.slice(0, 10)}>` },
      body,
      contentType: MANSCDP,
      target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200);

    const cmd = await waitFor(() => device.commands.find((c) => c.cmdType === 'DeviceControl' && c.sn === '901'), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'DeviceControl at the device',
    });
    assert.equal(cmd.targetId, channelId);
    assert.equal(cmd.flow.remotePort, owner.sipPort, "sent from the owner's SIP address");
    const control = device.controls.find((c) => c.sn === '901');
    assert.equal(control?.ptzError, undefined);
    assert.ok(control?.ptz !== undefined, 'PTZCmd decoded by the device');

    // DeviceControl beyond PTZ (GB/T 28181-2016 §A.2.3), addressed to the device: relayed the same way
    const controls: [sn: string, element: string, expected: unknown][] = [
      ['911', '<GuardCmd>SetGuard</GuardCmd>', { type: 'GuardCmd', value: 'SetGuard' }],
      ['912', '<AlarmCmd>ResetAlarm</AlarmCmd>', { type: 'AlarmCmd', value: 'ResetAlarm' }],
      ['913', '<RecordCmd>Record</RecordCmd>', { type: 'RecordCmd', value: 'Record' }],
      ['914', '<TeleBoot>Boot</TeleBoot>', { type: 'TeleBoot' }],
    ];
    for (const [sn, element, expected] of controls) {
      const controlBody = `<?xml version="1.0" encoding="GB2312"?>\r\n<Control>\r\n<CmdType>DeviceControl</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${DEVICE}</DeviceID>\r\n${element}\r\n</Control>\r\n`;
      const answer = await cluster.upstream.stack.request({
        method: 'MESSAGE',
        uri: `sip:${DEVICE}@127.0.0.1:${leader.sipPort}`,
        headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${DEVICE}@${SERVER_ID.slice(0, 10)}>` },
        body: controlBody,
        contentType: MANSCDP,
        target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
      });
      assert.equal(answer.status, 200, sn);
      const got = await waitFor(() => device.controls.find((c) => c.sn === sn), { timeoutMs: 5000, intervalMs: 20, description: `DeviceControl ${sn} at the device` });
      assert.deepEqual(got.command, expected, sn);
      const at = device.commands.find((c) => c.cmdType === 'DeviceControl' && c.sn === sn);
      assert.equal(at?.flow.remotePort, owner.sipPort, `${sn} sent from the owner's SIP address`);
    }
  });
});
