// One signaling instance, standalone on its embedded store, driven by SIPp devices (test/sipp):
// REGISTER with a 401 digest challenge, keepalives, a Catalog answer in two MESSAGEs, a PTZ command
// checked byte for byte, a RecordInfo answer in three MESSAGEs, UDP and TCP, and the HTTP API results.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor, type SippResult, type SippRun } from '@vms/harness';
import { operatorToken, runDevice, startInstance, waitOnline, type DeviceView, type Instance } from './signaling-fixture.ts';

const DEV = '34020000001320000001';
const DEV_TCP = '34020000001320000002';
const DEV_BAD = '34020000001320000003';
const CH_PREFIX = '340200000013100000';
const CH1 = `${CH_PREFIX}01`;

interface Page<T> {
  readonly records: T[];
  readonly total: number;
}
interface Progress {
  readonly state: string;
  readonly total: number | null;
  readonly received: number;
  readonly partial: boolean;
}
interface RecordResult {
  readonly sn: string;
  readonly state: string;
  readonly complete: boolean;
  readonly total: number | null;
  readonly items: { readonly deviceId: string; readonly name: string; readonly startTime: string; readonly type: string; readonly fileSize: number }[];
}

/**
 * What SIPp saw. A device ends by itself once its out-of-call scenario answered: exit 0 and one
 * successful call. A failed check_it in the out-of-call scenario does not change SIPp's exit code, so
 * the error log is checked too; a device that never got its query is stopped and fails the test.
 */
async function finish(run: SippRun, waitMs = 15_000): Promise<SippResult> {
  const ended = await Promise.race([run.done, sleep(waitMs).then(() => null)]);
  const result = ended ?? (await run.stop());
  assert.doesNotMatch(result.errors, /Failed regexp match|Aborting call/, result.errors);
  assert.ok(ended !== null, `the device's out-of-call scenario never completed\n${result.errors}`);
  assert.equal(result.ok, true, `SIPp exit ${result.exitCode}: ${result.output}\n${result.errors}`);
  assert.equal(result.stats?.successful, 1);
  return result;
}

describe('signaling instance with SIPp devices (embedded store)', () => {
  let instance: Instance;
  const runs: SippRun[] = [];
  const device = async (o: Omit<Parameters<typeof runDevice>[0], 'instance'>): Promise<SippRun> => {
    const run = await runDevice({ instance, ...o });
    runs.push(run);
    return run;
  };
  before(async () => {
    instance = await startInstance();
  });
  after(async () => {
    await Promise.all(runs.map((r) => r.stop())); // no-op for devices that ended
    await instance?.stop();
  });

  it('registers through a 401 digest challenge, keeps alive, syncs a catalog sent in two MESSAGEs (UDP)', async () => {
    const run = await device({ deviceId: DEV, ooc: 'catalog-answer.xml', keys: { channel_prefix: CH_PREFIX } });
    const online = await waitOnline(instance, DEV);
    assert.deepEqual([online.transport, online.ownerNode !== null], ['UDP', true]);
    const firstKeepalive = online.keepaliveAt;
    await waitFor(async () => (await instance.api<DeviceView>('GET', `/vms/devices/${DEV}`)).data.keepaliveAt !== firstKeepalive, {
      timeoutMs: 5000,
      description: 'a keepalive after the REGISTER',
    });

    const sync = await instance.api<Progress>('POST', `/vms/device/catalog/sync?deviceId=${DEV}`);
    assert.equal(sync.success, true, sync.msg);
    const done = await waitFor(
      async () => {
        const p = await instance.api<Progress>('GET', `/blade-iot/vms/device/catalog/sync?deviceId=${DEV}`);
        return p.data.state === 'done' ? p.data : null;
      },
      { timeoutMs: 10_000, description: 'catalog sync done' },
    );
    assert.deepEqual({ ...done }, { ...done, state: 'done', total: 3, received: 3, partial: false });
    const channels = await instance.api<Page<{ channelId: string; name: string; status: string; ptzType: number | null }>>('GET', `/vms/channels?deviceId=${DEV}`);
    assert.deepEqual(
      channels.data.records.map((c) => [c.channelId, c.name, c.status, c.ptzType]),
      [
        [CH1, 'Gate', 'ON', 1],
        [`${CH_PREFIX}02`, 'Hall', 'ON', null],
        [`${CH_PREFIX}03`, 'Yard', 'OFF', null],
      ],
    );
    assert.equal((await instance.api<DeviceView>('GET', `/vms/devices/${DEV}`)).data.channelCount, 3);

    const result = await finish(run);
    assert.match(result.messages, /SIP\/2.0 401 Unauthorized/);
    assert.match(result.messages, /Authorization: Digest username="34020000001320000001"/);
    assert.match(result.messages, /<Query>\r?\n<CmdType>Catalog<\/CmdType>/);
  });

  it('sends PTZ to the channel with the Annex A.3 bytes the device checks (left, speed 128)', async () => {
    // Same device, new SIPp process: it re-REGISTERs from another port and the platform follows it.
    const previousPort = (await instance.api<DeviceView>('GET', `/vms/devices/${DEV}`)).data.remotePort;
    const run = await device({ deviceId: DEV, ooc: 'ptz-receive.xml' });
    await waitFor(async () => (await instance.api<DeviceView>('GET', `/vms/devices/${DEV}`)).data.remotePort !== previousPort, {
      timeoutMs: 10_000,
      description: 'the re-REGISTER from the new SIPp port',
    });
    const ptz = await instance.api('POST', `/vms/ptz/control?channelId=${CH1}&command=left&speed=128`);
    assert.deepEqual([ptz.code, ptz.success], [200, true], ptz.msg);

    const result = await finish(run);
    const control = /<Control>[\s\S]*?<\/Control>/.exec(result.messages)?.[0] ?? '';
    assert.match(control, /<DeviceID>34020000001310000001<\/DeviceID>/);
    assert.match(control, /<PTZCmd>A50F010280000037<\/PTZCmd>/);
    assert.match(result.messages, /MESSAGE sip:34020000001310000001@127\.0\.0\.1:\d+ SIP\/2\.0/, 'addressed to the channel, sent to the device');
  });

  it('answers a record query with an SN at once and the assembled result of three MESSAGEs later', async () => {
    const previousPort = (await instance.api<DeviceView>('GET', `/vms/devices/${DEV}`)).data.remotePort;
    const run = await device({ deviceId: DEV, ooc: 'recordinfo-answer.xml', keys: { channel: CH1 } });
    await waitFor(async () => (await instance.api<DeviceView>('GET', `/vms/devices/${DEV}`)).data.remotePort !== previousPort, { timeoutMs: 10_000 });
    const query = await instance.api<{ sn: string }>('POST', `/vms/record/query?channelId=${CH1}&startTime=2025-06-01%2000:00:00&endTime=2025-06-01T23:59:59`);
    assert.equal(query.success, true, query.msg);
    const { sn } = query.data;
    const result = await waitFor(
      async () => {
        const r = await instance.api<RecordResult>('GET', `/vms/record/result?sn=${sn}`);
        return r.data.state === 'done' ? r.data : null;
      },
      { timeoutMs: 10_000, description: 'record result assembled' },
    );
    assert.deepEqual([result.sn, result.complete, result.total, result.items.length], [sn, true, 5, 5]);
    assert.deepEqual(
      result.items.map((i) => [i.name, i.startTime, i.type]),
      [
        ['rec1', '2025-06-01T00:00:00', 'time'],
        ['rec2', '2025-06-01T01:00:00', 'time'],
        ['rec3', '2025-06-01T02:00:00', 'alarm'],
        ['rec4', '2025-06-01T03:00:00', 'time'],
        ['rec5', '2025-06-01T04:00:00', 'time'],
      ],
    );
    assert.equal(result.items[2]?.fileSize, 2097152);
    const unknown = await fetch(`${instance.httpUrl}/vms/record/result?sn=00000000-1`, { headers: { 'Blade-Auth': `bearer ${operatorToken()}` } });
    assert.equal(unknown.status, 403, 'an unknown SN answers a tenant like another tenant\'s (SPEC SEC-2)');

    const trace = await finish(run);
    assert.match(trace.messages, /<CmdType>RecordInfo<\/CmdType>[\s\S]*<StartTime>2025-06-01T00:00:00<\/StartTime>/);
  });

  it('registers and syncs over TCP', async () => {
    const run = await device({ deviceId: DEV_TCP, ooc: 'catalog-answer.xml', transport: 't1', keys: { channel_prefix: '340200000013200000' } });
    assert.equal((await waitOnline(instance, DEV_TCP)).transport, 'TCP');
    assert.equal((await instance.api('POST', `/vms/device/catalog/sync?deviceId=${DEV_TCP}`)).success, true);
    await waitFor(async () => (await instance.api<Progress>('GET', `/vms/device/catalog/sync?deviceId=${DEV_TCP}`)).data.state === 'done', { timeoutMs: 10_000 });
    assert.equal((await instance.api<Page<unknown>>('GET', `/vms/channels?deviceId=${DEV_TCP}`)).data.total, 3);
    const trace = await finish(run);
    assert.match(trace.messages, /TCP message received/);
  });

  it('refuses a wrong password with 403 and never lists the device', async () => {
    const run = await device({ deviceId: DEV_BAD, ooc: 'catalog-answer.xml', password: 'not-the-password', keys: { channel_prefix: CH_PREFIX } });
    const result = await run.done;
    assert.equal(result.ok, false);
    assert.match(result.errors, /SIP\/2\.0 403 Forbidden/);
    const r = await instance.api('GET', `/vms/devices/${DEV_BAD}`);
    assert.equal(r.code, 403, 'unknown to a tenant token: the same answer as another tenant\'s device');
  });

  it('a registered device that stopped answering: 4606 once the request deadline passes', async () => {
    // DEV is still registered (its last SIPp ended a moment ago) but nothing answers any more.
    const status = await instance.api('GET', `/vms/device/status?deviceId=${DEV}`);
    assert.deepEqual([status.code, status.success], [4606, false], status.msg);
  });
});
