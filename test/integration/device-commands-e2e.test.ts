// PTZ beyond moves, device configuration and the GB/T 28181-2022 commands end to end: the control API
// of a real signaling instance (child process) → SIP → the device simulator, which answers as a
// camera would (presets it remembers, Results, snapshot pictures POSTed to the upload URL it was
// given, an upgrade result notified later); a 2016-only simulated device gets 4610 for the 2022
// commands at once, not a timeout.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { syncChannels } from './media-e2e-fixture.ts';
import { operatorToken, PASSWORD, SERVER_ID, startInstance, type Instance } from './signaling-fixture.ts';

const DEV22 = '34020000001320000061';
const DEV16 = '34020000001320000062';

interface Answer {
  readonly deviceId: string;
  readonly fields: Record<string, unknown>;
}

/**
 * The HTTP status of a POST whose body the server may refuse before reading it all (413 on
 * Content-Length): the answer is taken even when the rest of the body can no longer be written.
 */
function postStatus(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'image/jpeg', 'content-length': body.length } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.on('close', () => reject(new Error('connection closed without an answer'))); // no-op once resolved
    // An oversized body is announced but only its first KiB sent: the server must answer from Content-Length
    // alone, and no megabytes sit unread in its socket when it closes (an RST then can drop the answer).
    if (body.length > 64 * 1024) req.write(body.subarray(0, 1024));
    else req.end(body);
  });
}

async function startDevice(instance: Instance, deviceId: string, gbVersion: '2016' | '2022'): Promise<SimulatedDevice> {
  const device = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: PASSWORD, channels: 1, gbVersion, utcOffsetMinutes: 480 });
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
  await syncChannels(instance, deviceId, 1);
  return device;
}

describe('device commands: API → SIP → device simulator', () => {
  let instance: Instance;
  let dev22: SimulatedDevice;
  let dev16: SimulatedDevice;
  let ch22: string;
  let ch16: string;
  const ok = async <T = unknown>(method: 'GET' | 'POST', path: string): Promise<T> => {
    const r = await instance.api<T>(method, path);
    assert.deepEqual([r.code, r.success], [200, true], `${method} ${path}: ${r.msg}`);
    return r.data;
  };
  const lastControl = (d: SimulatedDevice) => d.controls.at(-1);

  before(async () => {
    instance = await startInstance();
    [dev22, dev16] = await Promise.all([startDevice(instance, DEV22, '2022'), startDevice(instance, DEV16, '2016')]);
    ch22 = dev22.channelIds[0] ?? '';
    ch16 = dev16.channelIds[0] ?? '';
  });
  after(async () => {
    await Promise.all([dev22?.close(), dev16?.close()]);
    await instance?.stop();
  });

  it('presets: set two, delete one, the PresetQuery answer lists what the camera kept; Annex A.3.4 bytes', async () => {
    await ok('POST', `/vms/ptz/preset?channelId=${ch22}&action=set&presetId=3`);
    assert.deepEqual(lastControl(dev22)?.ptz?.command, { kind: 'preset', action: 'set', preset: 3 });
    assert.equal(lastControl(dev22)?.targetId, ch22);
    await ok('POST', `/vms/ptz/preset?channelId=${ch22}&action=set&presetId=7`);
    await ok('POST', `/vms/ptz/preset?channelId=${ch22}&action=delete&presetId=3`);
    await ok('POST', `/vms/ptz/preset?channelId=${ch22}&action=goto&presetId=7`);
    assert.deepEqual(lastControl(dev22)?.ptz?.command, { kind: 'preset', action: 'call', preset: 7 });
    // Annex A.3.4 by hand: A5 0F, address 01, 82H call, data1 00, data2 = preset 07, 00, sum of bytes 1-7 mod 256 = 3EH
    assert.deepEqual(lastControl(dev22)?.command, { type: 'PTZCmd', ptzCmd: 'A50F01820007003E', controlPriority: '5' });
    const presets = await ok<{ presetId: string; presetName: string | null }[]>('GET', `/vms/ptz/presets?channelId=${ch22}`);
    assert.deepEqual(presets, [{ presetId: '7', presetName: '预置点7' }]);
    const bad = await instance.api('POST', `/vms/ptz/preset?channelId=${ch22}&action=set&presetId=256`);
    assert.equal(bad.code, 400, 'presets are one byte (1-255)');
  });

  it('cruise and scan: each action reaches the camera as its PTZCmd; the cruise track is listed by the 2022 queries', async () => {
    const sent: unknown[] = [];
    for (const q of ['action=add&group=1&presetId=7', 'action=add&group=1&presetId=9', 'action=speed&group=1&value=300', 'action=dwell&group=1&value=5', 'action=start&group=1', 'action=stop']) {
      await ok('POST', `/vms/ptz/cruise?channelId=${ch22}&${q}`);
      sent.push(lastControl(dev22)?.ptz?.command);
    }
    assert.deepEqual(sent, [
      { kind: 'cruise', action: 'add', group: 1, value: 7 },
      { kind: 'cruise', action: 'add', group: 1, value: 9 },
      { kind: 'cruise', action: 'speed', group: 1, value: 300 },
      { kind: 'cruise', action: 'dwell', group: 1, value: 5 },
      { kind: 'cruise', action: 'start', group: 1, value: 0 },
      { kind: 'stop' },
    ]);
    const scans: unknown[] = [];
    for (const q of ['action=left&group=2', 'action=right&group=2', 'action=speed&group=2&speed=100', 'action=start&group=2', 'action=stop']) {
      await ok('POST', `/vms/ptz/scan?channelId=${ch22}&${q}`);
      scans.push(lastControl(dev22)?.ptz?.command);
    }
    assert.deepEqual(scans, [
      { kind: 'scan', action: 'left', group: 2 },
      { kind: 'scan', action: 'right', group: 2 },
      { kind: 'scan', action: 'speed', group: 2, speed: 100 },
      { kind: 'scan', action: 'start', group: 2 },
      { kind: 'stop' },
    ]);
    const list = await ok<Answer>('GET', `/vms/ptz/cruise/tracks?channelId=${ch22}`);
    // GB/T 28181-2022 §A.2.6.13/14 shapes (shared/gb28181 queries-2022.ts)
    assert.deepEqual(list.fields['CruiseTrackList'], { '@Num': '1', CruiseTrack: [{ Number: '1', Name: '巡航1' }] });
    const track = await ok<Answer>('GET', `/vms/ptz/cruise/track?channelId=${ch22}&number=1`);
    assert.deepEqual((track.fields['CruisePointList'] as { CruisePoint: { PresetIndex: string }[] }).CruisePoint.map((i) => i.PresetIndex), ['7', '9']);
    const missing = await instance.api('GET', `/vms/ptz/cruise/track?channelId=${ch22}&number=5`);
    assert.equal(missing.code, 4607, 'the camera answers Result ERROR for a track it does not have');
  });

  it('home position set (DeviceControl) and read back (2022 HomePositionQuery); drag-to-zoom', async () => {
    await ok('POST', `/vms/ptz/home?channelId=${ch22}&enabled=true&presetIndex=7&resetTime=30`);
    assert.deepEqual(lastControl(dev22)?.command, { type: 'HomePosition', enabled: '1', resetTime: '30', presetIndex: '7' });
    const home = await ok<Answer>('GET', `/vms/ptz/home?channelId=${ch22}`);
    assert.deepEqual(home.fields['HomePosition'], { Enabled: '1', ResetTime: '30', PresetIndex: '7' });
    await ok('POST', `/vms/ptz/dragzoom?channelId=${ch22}&direction=out&length=1920&width=1080&midPointX=960&midPointY=540&lengthX=200&lengthY=100`);
    assert.deepEqual(lastControl(dev22)?.command, {
      type: 'DragZoom',
      direction: 'out',
      zoom: { length: '1920', width: '1080', midPointX: '960', midPointY: '540', lengthX: '200', lengthY: '100' },
    });
  });

  it('DeviceConfig BasicParam is applied and ConfigDownload reads it back', async () => {
    await ok('POST', `/vms/device/config?deviceId=${DEV22}&name=${encodeURIComponent('东门')}&heartBeatInterval=30&heartBeatCount=4`);
    const config = await ok<Answer>('GET', `/vms/device/config?deviceId=${DEV22}&configType=BasicParam`);
    const basic = config.fields['BasicParam'] as Record<string, string>;
    assert.deepEqual([basic['name'], basic['heartBeatInterval'], basic['heartBeatCount'], basic['sipServerId']], ['东门', '30', '4', SERVER_ID]);
    const none = await instance.api('POST', `/vms/device/config?deviceId=${DEV22}`);
    assert.equal(none.code, 400, 'a DeviceConfig with nothing to set is refused before it is sent');
  });

  it('snapshot: the camera uploads the pictures to the URL given, they are kept and listed; a wrong token is refused', async () => {
    const req = await ok<{ sessionId: string; uploadUrl: string; count: number }>('POST', `/vms/device/snapshot?channelId=${ch22}&count=2&interval=1`);
    assert.match(req.uploadUrl, new RegExp(`^${instance.httpUrl}/vms/snapshot/upload/${req.sessionId}$`));
    const kept = await waitFor(
      async () => {
        const list = await ok<{ name: string; channelId: string; sessionId: string; size: number }[]>('GET', `/vms/device/snapshots?deviceId=${DEV22}`);
        return list.length >= 2 ? list : null;
      },
      { timeoutMs: 10_000, description: 'two pictures stored' },
    );
    assert.deepEqual(kept.map((k) => [k.channelId, k.sessionId]), [[ch22, req.sessionId], [ch22, req.sessionId]]);
    assert.deepEqual(dev22.uploads.map((u) => u.status), [200, 200]);
    const picture = await ok<{ contentType: string; size: number; base64: string }>('GET', `/vms/device/snapshots/picture?deviceId=${DEV22}&name=${kept[0]?.name ?? ''}`);
    assert.deepEqual([picture.contentType, picture.size, Buffer.from(picture.base64, 'base64').subarray(0, 3).toString('hex')], ['image/jpeg', kept[0]?.size, 'ffd8ff']);
    // the third picture of a two-picture request, and a token nobody handed out: 404, nothing stored
    const jpeg = Buffer.from(picture.base64, 'base64');
    assert.equal((await fetch(req.uploadUrl, { method: 'POST', body: jpeg, headers: { 'content-type': 'image/jpeg' } })).status, 404);
    assert.equal((await fetch(`${instance.httpUrl}/vms/snapshot/upload/${'0'.repeat(32)}`, { method: 'POST', body: jpeg })).status, 404);
    // SPEC SEC-3: a body over vms.limits.snapshot-max-bytes (default 2 MiB) is refused before it is read whole; not a JPEG: 400
    const anyToken = `${instance.httpUrl}/vms/snapshot/upload/${'1'.repeat(32)}`;
    assert.equal(await postStatus(anyToken, Buffer.alloc(2 * 1024 * 1024 + 1, 0xff)), 413);
    assert.equal((await fetch(anyToken, { method: 'POST', body: Buffer.from('GIF89a') })).status, 400);
    assert.equal((await ok<unknown[]>('GET', `/vms/device/snapshots?deviceId=${DEV22}`)).length, 2);
    const traversal = await instance.api('GET', `/vms/device/snapshots/picture?deviceId=${DEV22}&name=..%2F..%2Fvms.sqlite`);
    assert.equal(traversal.code, 404);
  });

  it('firmware upgrade: running at once, done with the new firmware once DeviceUpgradeResult arrives', async () => {
    const started = await ok<{ state: string; sessionId: string }>('POST', `/vms/device/upgrade?deviceId=${DEV22}&firmware=V2.0.0&fileUrl=${encodeURIComponent('http://10.0.0.9/fw.bin')}&manufacturer=VMS`);
    assert.equal(started.state, 'running');
    assert.deepEqual(lastControl(dev22)?.command, { type: 'DeviceUpgrade', firmware: 'V2.0.0', fileUrl: 'http://10.0.0.9/fw.bin', manufacturer: 'VMS', sessionId: started.sessionId });
    const done = await waitFor(
      async () => {
        const s = await ok<{ state: string; runningFirmware: string | null } | null>('GET', `/vms/device/upgrade?deviceId=${DEV22}`);
        return s?.state === 'done' ? s : null;
      },
      { timeoutMs: 5000, description: 'upgrade result' },
    );
    assert.equal(done.runningFirmware, 'V2.0.0');
    assert.equal((await ok<{ firmware: string }>('GET', `/vms/device/info?deviceId=${DEV22}`)).firmware, 'V2.0.0');
  });

  it('SD card status and format, precise PTZ then its position, target tracking', async () => {
    const sd = await ok<Answer>('GET', `/vms/device/sdcard?deviceId=${DEV22}`);
    assert.equal((sd.fields['SDCardStatusInfo'] as { Item: { Status: string }[] }).Item[0]?.Status, 'ok', '§A.2.6.16');
    await ok('POST', `/vms/device/sdcard/format?deviceId=${DEV22}&index=1`);
    assert.deepEqual(lastControl(dev22)?.command, { type: 'FormatSDCard', index: '1' });
    await ok('POST', `/vms/ptz/precise?channelId=${ch22}&pan=120.5&tilt=-10&zoom=4`);
    const position = await ok<Answer>('GET', `/vms/ptz/position?channelId=${ch22}`);
    assert.deepEqual([position.fields['Pan'], position.fields['Tilt'], position.fields['Zoom']], ['120.5', '-10', '4']);
    await ok('POST', `/vms/ptz/track?channelId=${ch22}&mode=auto`);
    assert.deepEqual(lastControl(dev22)?.command, { type: 'TargetTrack', value: 'Auto' });
  });

  it('a 2016 device: presets work, every 2022 command answers 4610 at once and nothing reaches the device', async () => {
    await ok('POST', `/vms/ptz/preset?channelId=${ch16}&action=set&presetId=2`);
    const before = dev16.commands.length;
    const calls: ['GET' | 'POST', string][] = [
      ['GET', `/vms/ptz/position?channelId=${ch16}`],
      ['POST', `/vms/ptz/precise?channelId=${ch16}&pan=1&tilt=1&zoom=1`],
      ['POST', `/vms/device/snapshot?channelId=${ch16}`],
      ['GET', `/vms/device/sdcard?deviceId=${DEV16}`],
      ['POST', `/vms/device/sdcard/format?deviceId=${DEV16}`],
      ['POST', `/vms/device/upgrade?deviceId=${DEV16}&firmware=V2&fileUrl=http%3A%2F%2Fh%2Ff`],
      ['POST', `/vms/ptz/track?channelId=${ch16}&mode=stop`],
      ['GET', `/vms/ptz/cruise/tracks?channelId=${ch16}`],
      ['GET', `/vms/ptz/cruise/track?channelId=${ch16}&number=1`],
      ['GET', `/vms/ptz/home?channelId=${ch16}`],
    ];
    for (const [method, path] of calls) {
      const t0 = Date.now();
      const r = await instance.api(method, path);
      assert.deepEqual([r.code, r.success], [4610, false], `${method} ${path}: ${r.msg}`);
      assert.match(r.msg, /GB\/T 28181-2022/);
      assert.ok(Date.now() - t0 < 2000, 'refused at once, not after a device timeout');
    }
    assert.equal(dev16.commands.length, before, 'nothing was sent to the device');
  });

  it('tenants: another tenant\'s token is refused before anything reaches the device', async () => {
    const before = dev22.commands.length;
    const r = await fetch(`${instance.httpUrl}/vms/ptz/preset?channelId=${ch22}&action=set&presetId=4`, { method: 'POST', headers: { 'Blade-Auth': `bearer ${operatorToken(undefined, '000001')}` } });
    assert.equal(r.status, 403);
    assert.equal(dev22.commands.length, before);
  });
});
