// End-to-end (SPEC CASC-4): with Redis gone, the cascade events a device's uplink raises on a
// non-leader (an alarm, the device going offline) cannot be published: they are logged and dropped,
// and the uplink itself is still answered 200 and its effect persisted (the device marked offline).
import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool } from '@vms/cluster';
import { createSimulatedDevice, defaultChannelIds, type SimulatedDevice } from '@vms/device-sim';
import { SIP_CHANNELS, type MessageInEvent, type MessageOutEvent } from '@vms/sip';
import { waitFor } from '@vms/test';
import { databaseWithPlatform, startTestUpstream, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

const ENV = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5', LOG_LEVEL: 'info' };
const DEVICE = '34020000001320000501';
const DROPPED = 'cascade event dropped: publish failed';

describe('cascade publish failure never breaks the uplink (CASC-4)', () => {
  let stores: Stores;
  let upstream: TestUpstream;
  const instances: Instance[] = [];
  let device: SimulatedDevice | undefined;

  before(async () => {
    stores = await startStores();
    upstream = await startTestUpstream();
  });
  after(async () => {
    await device?.close().catch(() => undefined);
    await Promise.all(instances.map((i) => i.proc.stop().catch(() => undefined)));
    await upstream?.close();
    await stores?.stop();
  });

  it('Redis down: the alarm is answered 200, the unregister is answered and persisted, the events are dropped and logged', async () => {
    const [channelId] = defaultChannelIds(DEVICE, 1);
    assert.ok(channelId !== undefined);
    const s = await databaseWithPlatform(stores, 'casc_pubfail', upstream, (repo) =>
      repo.shareChannels(UPSTREAM_ID, [{ deviceId: DEVICE, channelId, catalogGroupId: null, parentId: null }]),
    );
    const leader = await startInstance(s, 'casc-pf-a', { cascade: true, env: ENV });
    instances.push(leader);
    const other = await startInstance(s, 'casc-pf-b', { cascade: false, env: ENV });
    instances.push(other);
    await waitFor(() => upstream.registersFrom(leader.sipPort).length > 0, { timeoutMs: 10_000, intervalMs: 20, description: 'leader registered upstream' });

    device = createSimulatedDevice({ server: { host: '127.0.0.1', port: other.sipPort, id: SERVER_ID }, deviceId: DEVICE, password: 'unused-no-challenge', channels: 1 });
    await device.start();
    await waitFor(() => device?.registered === true, { timeoutMs: 10_000, description: 'device registered on the non-leader' });
    const sync = await api(other, `/vms/device/catalog/sync?deviceId=${DEVICE}`, { method: 'POST' });
    assert.equal(sync.json.success, true, JSON.stringify(sync.json));
    await waitFor(
      async () => {
        const d = (await api(other, `/vms/channels?deviceId=${DEVICE}&size=100`)).json.data as { total?: number; records?: unknown[] } | unknown[];
        return (Array.isArray(d) ? d.length : (d.total ?? d.records?.length ?? 0)) >= 1;
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'channel stored' },
    );

    // the answers the device receives, matched to its requests by Call-ID + CSeq
    const sent = new Map<string, string>(); // callId/cseq → what
    const answers = new Map<string, number>();
    const onOut = (m: unknown): void => {
      const e = m as MessageOutEvent;
      if (e.message.type !== 'request') return;
      const body = e.message.body.toString('utf8');
      const what = body.includes('<CmdType>Alarm</CmdType>') ? 'alarm' : e.message.method === 'REGISTER' && e.message.headers.get('Expires') === '0' ? 'unregister' : null;
      if (what !== null) sent.set(`${e.message.headers.get('Call-ID')}/${e.message.headers.get('CSeq')}`, what);
    };
    const onIn = (m: unknown): void => {
      const e = m as MessageInEvent;
      if (e.message.type !== 'response') return;
      const what = sent.get(`${e.message.headers.get('Call-ID')}/${e.message.headers.get('CSeq')}`);
      if (what !== undefined && e.message.status >= 200) answers.set(what, e.message.status);
    };
    diagnosticsChannel.subscribe(SIP_CHANNELS.messageOut, onOut);
    diagnosticsChannel.subscribe(SIP_CHANNELS.messageIn, onIn);
    try {
      await stores.redis.stop();
      await device.raiseAlarm({ description: 'while redis is down' });
      await waitFor(() => answers.has('alarm'), { timeoutMs: 5000, intervalMs: 20, description: 'alarm answered' });
      assert.equal(answers.get('alarm'), 200);

      await device.close(); // unregister → offline → channel OFF notify, which cannot be published
      device = undefined;
      await waitFor(() => answers.has('unregister'), { timeoutMs: 5000, intervalMs: 20, description: 'unregister answered' });
      assert.equal(answers.get('unregister'), 200);
    } finally {
      diagnosticsChannel.unsubscribe(SIP_CHANNELS.messageOut, onOut);
      diagnosticsChannel.unsubscribe(SIP_CHANNELS.messageIn, onIn);
    }

    const pool = createMysqlPool(s.mysqlUrl, { connectionLimit: 1 });
    try {
      await waitFor(
        async () => {
          const [rows] = await pool.query('SELECT online FROM gb_device WHERE device_id = ?', [DEVICE]);
          return (rows as { online: number }[])[0]?.online === 0;
        },
        { timeoutMs: 5000, intervalMs: 50, description: 'device persisted offline' },
      );
    } finally {
      await pool.end();
    }
    await eventually(() => {
      const kinds = logLines(other, DROPPED).map((l) => l.kind);
      return kinds.includes('notify.alarm') && kinds.includes('notify.catalog');
    }, 'both dropped events logged by the non-leader');
    assert.equal(logLines(leader, DROPPED).length, 0, 'the leader publishes nothing');
  });
});
