// End-to-end (SPEC CASC-2): the upstream's catalog query, sent to the cascade leader, is answered with
// every shared channel — channels of devices owned by any instance, since channels live in the shared
// database — paged, each page carrying the right SumNum. Devices are @vms/device-sim devices
// registered on two instances; the upstream platform is @vms/sip in this process.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultChannelIds } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { MANSCDP, SERVER_ID, shares, UPSTREAM_DOMAIN, UPSTREAM_ID, useCascadeCluster } from './cascade-cluster.ts';

const DEVICE_A = '34020000001320000101';
const DEVICE_B = '34020000001320000201';
const CHANNELS = 3;

describe('catalog query from the upstream (CASC-2)', () => {
  const cluster = useCascadeCluster();

  it('answers with every shared channel across instances, SumNum = shared channel count', async () => {
    // 2 of device A's channels and all 3 of device B's are shared; A's third is not
    const shared = [...shares(DEVICE_A, defaultChannelIds(DEVICE_A, CHANNELS).slice(0, 2)), ...shares(DEVICE_B, defaultChannelIds(DEVICE_B, CHANNELS))];
    const s = await cluster.database('casc_catalog', shared);
    const leader = await cluster.instance(s, 'casc-cat-a', { cascade: true });
    const other = await cluster.instance(s, 'casc-cat-b');
    await cluster.registered(leader);
    await cluster.device(leader, DEVICE_A, CHANNELS);
    await cluster.device(other, DEVICE_B, CHANNELS);

    const sn = 4711;
    const query = `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>Catalog</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${SERVER_ID}</DeviceID>\r\n</Query>\r\n`;
    const res = await cluster.upstream.stack.request({
      method: 'MESSAGE',
      uri: `sip:${SERVER_ID}@127.0.0.1:${leader.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>` },
      body: query,
      contentType: MANSCDP,
      target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200);

    const answers = await waitFor(
      () => {
        const pages = cluster.upstream.received.filter((r) => r.method === 'MESSAGE' && r.body.includes('<CmdType>Catalog</CmdType>') && r.body.includes(`<SN>${sn}</SN>`));
        const items = pages.flatMap((p) => [...p.body.matchAll(/<Item>\s*<DeviceID>(\d{20})<\/DeviceID>/g)].map((m) => m[1]));
        return items.length >= shared.length ? { pages, items } : null;
      },
      { timeoutMs: 10_000, intervalMs: 20, description: 'catalog answer pages' },
    );
    for (const p of answers.pages) {
      assert.equal(p.fromPort, leader.sipPort, 'answered by the leader');
      assert.match(p.body, new RegExp(`<SumNum>${shared.length}</SumNum>`));
      assert.match(p.body, /<Response>/);
    }
    assert.deepEqual([...answers.items].sort(), shared.map((c) => c.channelId).sort());
  });
});
