// End-to-end (SPEC CASC-4): with Redis gone, the cascade events a device's uplink raises on a
// non-leader (an alarm, the device going offline) cannot be published: they are logged and dropped,
// and the uplink itself is still answered 200 and its effect persisted (the device marked offline).
import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { createMysqlPool } from '@vms/cluster';
import { defaultChannelIds } from '@vms/device-sim';
import { SIP_CHANNELS, type MessageInEvent, type MessageOutEvent } from '@vms/sip';
import { waitFor } from '@vms/harness';
import { eventually, logLines, shares, useCascadeCluster } from './cascade-cluster.ts';

const DEVICE = '34020000001320000501';
const DROPPED = 'cascade event dropped: publish failed';

describe('cascade publish failure never breaks the uplink (CASC-4)', () => {
  const cluster = useCascadeCluster();

  it('Redis down: the alarm is answered 200, the unregister is answered and persisted, the events are dropped and logged', async () => {
    const [channelId] = defaultChannelIds(DEVICE, 1);
    assert.ok(channelId !== undefined);
    const { stores } = cluster;
    const s = await cluster.database('casc_pubfail', shares(DEVICE, [channelId]));
    const leader = await cluster.instance(s, 'casc-pf-a', { cascade: true });
    const other = await cluster.instance(s, 'casc-pf-b');
    await cluster.registered(leader);
    const device = await cluster.device(other, DEVICE, 1);

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
