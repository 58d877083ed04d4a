// End-to-end (GB/T 28181-2016 §9.5, SPEC CASC-3): an upstream's queries about one of our cameras, sent to
// the cascade leader while the camera is owned by another instance. The owner asks the device (with an SN
// of its own), and every Response page comes back to the upstream from the leader with the upstream's SN.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultChannelIds } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { MANSCDP, SERVER_ID, shares, UPSTREAM_DOMAIN, UPSTREAM_ID, useCascadeCluster, type CascadeCluster } from './cascade-cluster.ts';

const NVR = '34020000001320000501';
const CHANNELS = 12; // the simulator answers 10 items per Catalog page: two pages

const query = (cmdType: string, sn: string, deviceId: string, extra = ''): string =>
  `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>${cmdType}</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${deviceId}</DeviceID>\r\n${extra}</Query>\r\n`;

async function ask(cluster: CascadeCluster, leaderPort: number, targetId: string, body: string): Promise<void> {
  const res = await cluster.upstream.stack.request({
    method: 'MESSAGE',
    uri: `sip:${targetId}@127.0.0.1:${leaderPort}`,
    headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${targetId}@${SERVER_ID.slice(0, 10)}>` },
    body,
    contentType: MANSCDP,
    target: { host: '127.0.0.1', port: leaderPort, transport: 'udp' },
  });
  assert.equal(res.status, 200);
}

describe('upstream queries about a camera owned by a non-leader (§9.5)', () => {
  const cluster = useCascadeCluster();

  it('DeviceInfo, Catalog (paged) and RecordInfo: the device is asked by its owner, the Responses reach the upstream from the leader with its SN', async () => {
    const channelIds = defaultChannelIds(NVR, CHANNELS);
    const s = await cluster.database('casc_queries', shares(NVR, channelIds));
    const leader = await cluster.instance(s, 'casc-q-a', { cascade: true });
    const owner = await cluster.instance(s, 'casc-q-b');
    await cluster.registered(leader);
    const device = await cluster.device(owner, NVR, CHANNELS, { manufacturer: 'SimVendor' });
    const fromLeader = (sn: string, cmdType: string) =>
      cluster.upstream.received.filter((r) => r.method === 'MESSAGE' && r.fromPort === leader.sipPort && r.body.includes(`<CmdType>${cmdType}</CmdType>`) && r.body.includes(`<SN>${sn}</SN>`));

    await ask(cluster, leader.sipPort, NVR, query('DeviceInfo', '7701', NVR));
    const [info] = await waitFor(() => (fromLeader('7701', 'DeviceInfo').length > 0 ? fromLeader('7701', 'DeviceInfo') : null), { timeoutMs: 10_000, intervalMs: 20, description: 'DeviceInfo Response at the upstream' });
    assert.ok(info !== undefined);
    assert.match(info.body, /<Response>/);
    assert.ok(info.body.includes(`<DeviceID>${NVR}</DeviceID>`));
    assert.ok(info.body.includes('<Manufacturer>SimVendor</Manufacturer>'), info.body);
    const asked = device.commands.find((c) => c.cmdType === 'DeviceInfo' && c.root === 'Query');
    assert.ok(asked !== undefined, 'the device was asked');
    assert.notEqual(asked.sn, '7701', 'with an SN of the owner, not the upstream one');
    assert.equal(asked.flow.remotePort, owner.sipPort, "from the owner's SIP address");

    await ask(cluster, leader.sipPort, NVR, query('Catalog', '7702', NVR));
    const pages = await waitFor(() => (fromLeader('7702', 'Catalog').length >= 2 ? fromLeader('7702', 'Catalog') : null), { timeoutMs: 10_000, intervalMs: 20, description: 'two Catalog pages at the upstream' });
    const items = pages.flatMap((p) => [...p.body.matchAll(/<Item>\s*<DeviceID>(\d{20})<\/DeviceID>/g)].map((m) => m[1]));
    assert.deepEqual(new Set(items), new Set(channelIds));
    assert.ok(pages.every((p) => p.body.includes(`<SumNum>${CHANNELS}</SumNum>`)));

    const [channel] = channelIds;
    const range = '<StartTime>2026-11-30T08:00:00</StartTime>\r\n<EndTime>2026-11-30T10:00:00</EndTime>\r\n<Secrecy>0</Secrecy>\r\n<Type>all</Type>\r\n';
    await ask(cluster, leader.sipPort, channel as string, query('RecordInfo', '7703', channel as string, range));
    const records = await waitFor(() => (fromLeader('7703', 'RecordInfo').length > 0 ? fromLeader('7703', 'RecordInfo') : null), { timeoutMs: 15_000, intervalMs: 20, description: 'RecordInfo Response at the upstream' });
    assert.ok(records.every((r) => r.body.includes(`<DeviceID>${channel}</DeviceID>`)));
    const sumNum = Number(/<SumNum>(\d+)<\/SumNum>/.exec(records[0]?.body ?? '')?.[1]);
    assert.ok(sumNum > 0, 'the simulator has records in that range');
    await waitFor(() => fromLeader('7703', 'RecordInfo').flatMap((r) => [...r.body.matchAll(/<Item>/g)]).length >= sumNum, { timeoutMs: 15_000, intervalMs: 50, description: 'every record page relayed' });
  });
});
