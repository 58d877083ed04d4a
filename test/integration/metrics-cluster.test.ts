// /metrics on a running cluster (docs/metrics.md): redis-server, mariadbd, two signaling instances as
// child processes, SIPp devices registering and sending keepalives. After real traffic the values
// moved where they should (devices online on the owner, a forward and its latency buckets on the entry
// node, routing failures by code, store round trips, leader), and no label carries an id.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { api, seedDevice, startDevice, startInstance, startStores, type Instance, type SimDevice, type Stores } from './routing-cluster.ts';

const DEV_A1 = '34020000001320000031';
const DEV_A2 = '34020000001320000032';
const DEV_B1 = '34020000001320000033';
const DEV_NOBODY = '34020000001320000039'; // a known device no instance owns: 4601
const FAST = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1', LOG_LEVEL: 'info' };

let stores: Stores;
let a: Instance;
let b: Instance;
const devices: SimDevice[] = [];

before(async () => {
  stores = await startStores();
  a = await startInstance(stores, 'node-a', { env: FAST });
  b = await startInstance(stores, 'node-b', { env: FAST });
  devices.push(await startDevice(stores, a, DEV_A1, 300), await startDevice(stores, a, DEV_A2, 300), await startDevice(stores, b, DEV_B1, 300));
  await seedDevice(stores, DEV_NOBODY);
});

after(async () => {
  await Promise.all(devices.map((d) => d.stop()));
  await Promise.all([a, b].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await stores?.stop();
});

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Prometheus text format 0.0.4, the sample lines. */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] ?? ''] = l[2] ?? '';
    out.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return out;
}

async function scrape(on: Instance): Promise<Sample[]> {
  const res = await fetch(`${on.httpUrl}/metrics`); // no token
  assert.equal(res.status, 200);
  return parse(await res.text());
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none). */
function value(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

describe('/metrics on a cluster', () => {
  it('counts registrations, keepalives and SIP traffic on the owner; devices online per instance', async () => {
    const sa = await waitFor(
      async () => {
        const s = await scrape(a);
        return value(s, 'vms_device_uplinks_total', { kind: 'keepalive' }) >= 4 ? s : null;
      },
      { timeoutMs: 15_000, intervalMs: 200, description: 'keepalives counted on node-a' },
    );
    assert.equal(value(sa, 'vms_devices_online'), 2);
    assert.equal(value(await scrape(b), 'vms_devices_online'), 1);
    assert.ok(value(sa, 'vms_sip_registrations_total', { result: 'accepted' }) >= 2);
    assert.ok(value(sa, 'vms_device_uplinks_total', { kind: 'register' }) >= 2);
    assert.ok(value(sa, 'vms_sip_requests_total', { direction: 'in', method: 'REGISTER' }) >= 2);
    // keepalives are MESSAGEs answered 200, most by the datagram shortcut
    assert.ok(value(sa, 'vms_sip_requests_total', { direction: 'in', method: 'MESSAGE' }) >= 4);
    assert.ok(value(sa, 'vms_sip_responses_total', { direction: 'out', method: 'MESSAGE', status: '200' }) >= 4);
    assert.ok(value(sa, 'vms_sip_responses_total', { direction: 'out', method: 'REGISTER', status: '200' }) >= 2);
    assert.ok(value(sa, 'vms_store_command_duration_seconds_count', { store: 'redis', outcome: 'ok' }) > 0, 'ownership claims and renewals');
    assert.ok(value(sa, 'vms_store_command_duration_seconds_count', { store: 'mysql', outcome: 'ok' }) > 0, 'registrations and heartbeats');
    assert.ok(value(sa, 'nodejs_eventloop_lag_seconds') >= 0);
    assert.equal(value(sa, 'vms_instance_info', { instance_id: 'node-a' }), 1);
  });

  it('counts a forward with its latency buckets on the entry node, and routing failures by code', async () => {
    const forwarded = await api(b, `/vms/device/info?deviceId=${DEV_A1}`);
    assert.equal(forwarded.json.code, 200, forwarded.bytes.toString());
    const offline = await api(b, `/vms/device/info?deviceId=${DEV_NOBODY}`);
    assert.equal(offline.json.code, 4601);
    const sb = await scrape(b);
    assert.ok(value(sb, 'vms_forward_duration_seconds_count', { outcome: 'ok' }) >= 1);
    const buckets = sb.filter((s) => s.name === 'vms_forward_duration_seconds_bucket' && s.labels.outcome === 'ok');
    assert.ok(buckets.length >= 10, 'histogram buckets');
    assert.equal(buckets.find((s) => s.labels.le === '+Inf')?.value, value(sb, 'vms_forward_duration_seconds_count', { outcome: 'ok' }));
    assert.ok(value(sb, 'vms_api_failures_total', { code: '4601' }) >= 1);
    // the owner answered the device query itself: its SIP MESSAGE to the device went out
    const sa = await scrape(a);
    assert.ok(value(sa, 'vms_sip_requests_total', { direction: 'out', method: 'MESSAGE' }) >= 1);
    assert.equal(value(sa, 'vms_forward_duration_seconds_count', { outcome: 'ok' }), 0, 'the owner forwarded nothing');
  });

  it('shows the cascade leader on exactly one instance and a catalog sync in flight on the owner', async () => {
    const leaders = await waitFor(
      async () => {
        const l = [value(await scrape(a), 'vms_cascade_leader'), value(await scrape(b), 'vms_cascade_leader')];
        return l[0] === 1 && l[1] === 0 ? l : null; // CASC-1: smallest node code, none flagged
      },
      { timeoutMs: 10_000, intervalMs: 200, description: 'node-a leads' },
    );
    assert.deepEqual(leaders, [1, 0]);
    const sync = await api(b, `/vms/device/catalog/sync?deviceId=${DEV_A2}`, { method: 'POST' });
    assert.equal(sync.json.code, 200, sync.bytes.toString());
    // the SIPp device accepts the query but sends no catalog: the sync waits on node-a
    assert.equal(value(await scrape(a), 'vms_catalog_syncs_in_flight'), 1);
    assert.equal(value(await scrape(b), 'vms_catalog_syncs_in_flight'), 0);
  });

  it('carries no id in any label value', async () => {
    for (const on of [a, b]) {
      for (const s of await scrape(on)) {
        for (const [k, v] of Object.entries(s.labels)) {
          assert.doesNotMatch(v, /\d{10,}/, `${s.name} ${k}="${v}" looks like an id`);
        }
      }
    }
  });
});
