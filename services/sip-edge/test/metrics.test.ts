// The edge's /metrics, scraped over HTTP from a real edge on loopback: a SIP stack standing for the shard
// answers 200, devices (SIP stacks) send through the edge. The series move by what went through, the shed
// and refused counts by what was refused, and no label carries a device id or an address.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildKeepalive } from '@vms/gb28181';
import { createSipStack, silentLogger, type SipStack } from '@vms/sip';
import { startEdge, type SipEdge } from '../src/edge.ts';
import { createEdgeMetrics, startMetricsServer, type MetricsServer } from '../src/metrics.ts';
import { createStaticShardSource } from '../src/shard-source.ts';

const DEV = '34020000001320000777';
let shard: SipStack;
let device: SipStack;
let edge: SipEdge;
let server: MetricsServer;

before(async () => {
  shard = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
  shard.onRequest('MESSAGE', (_req, ctx) => {
    ctx.reply(200);
  });
  edge = await startEdge({
    code: 'edge-m',
    bindHost: '127.0.0.1',
    host: '127.0.0.1',
    port: 0,
    transports: ['udp'],
    flowSecret: Buffer.alloc(32, 9),
    shards: createStaticShardSource([{ code: 'shard-1', sipHost: '127.0.0.1', sipPort: shard.port, group: 'default', online: true, draining: false }]),
    perAddressRequestsPerSec: 3, // burst 6: the seventh request in a row from one address is shed
    log: silentLogger,
  });
  server = await startMetricsServer(createEdgeMetrics({ counters: edge.counters, shards: edge.shards, defaultMetrics: false }), { host: '127.0.0.1', port: 0 });
  device = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
});

after(async () => {
  await server?.close();
  await edge?.close();
  await device?.close();
  await shard?.close();
});

const scrape = async (): Promise<string> => {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return res.text();
};
const value = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
};
const send = (from: string) =>
  device.request({
    method: 'MESSAGE',
    uri: 'sip:34020000002000000001@3402000000',
    headers: { From: `<sip:${from}@3402000000>`, To: '<sip:34020000002000000001@3402000000>' },
    body: buildKeepalive({ sn: '1', deviceId: from, status: 'OK' }),
    contentType: 'Application/MANSCDP+xml',
    target: { host: '127.0.0.1', port: edge.port, transport: 'udp' },
  });

describe('edge /metrics', () => {
  it('counts forwarded requests and responses by method and direction, placements, refusals, shed, shards', async () => {
    const before = await scrape();
    assert.equal(value(before, 'vms_edge_shards{state="eligible"}'), 1);
    assert.equal(value(before, 'vms_edge_requests_forwarded_total{method="MESSAGE",direction="device_to_shard"}'), 0);

    for (let i = 0; i < 3; i++) assert.equal((await send(DEV)).status, 200);
    assert.equal((await send('not-a-device')).status, 403);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(DEV)).status);
    assert.ok(statuses.includes(503), `shed past the per-address burst: ${statuses.join(',')}`);
    const passed = 3 + statuses.filter((s) => s === 200).length;
    const shed = statuses.filter((s) => s === 503).length;

    const text = await scrape();
    assert.equal(value(text, 'vms_edge_requests_forwarded_total{method="MESSAGE",direction="device_to_shard"}'), passed);
    assert.equal(value(text, 'vms_edge_responses_forwarded_total{direction="shard_to_device"}'), passed);
    assert.equal(value(text, 'vms_edge_placements_total'), passed);
    assert.equal(value(text, 'vms_edge_refused_total{reason="not_a_device"}'), 1);
    assert.equal(value(text, 'vms_edge_refused_total{reason="flow_token"}'), 0);
    assert.equal(value(text, 'vms_edge_shed_total{bound="address"}'), shed);
    assert.equal(value(text, 'vms_edge_placement_changes_total'), 0);
    assert.ok(!text.includes(DEV) && !text.includes('127.0.0.1'), 'no id or address in any label');
    // a second scrape reports the same totals (the mirror adds differences, not the totals again)
    assert.equal(value(await scrape(), 'vms_edge_requests_forwarded_total{method="MESSAGE",direction="device_to_shard"}'), passed);
  });

  it('anything but GET /metrics: 404', async () => {
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST' })).status, 404);
  });
});
