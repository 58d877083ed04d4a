// The owner-routing hook end to end inside one process: real fastify apps listening on loopback ports
// from the OS, the real forward client, shared in-memory stores standing in for Redis and MySQL.
// Child-process clusters with real Redis / MariaDB are in test/integration/routing-*.test.ts.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import {
  createForwardClient,
  createMemoryNodeRegistry,
  createMemoryOwnershipStore,
  FORWARD_HEADERS,
  OwnershipUnavailableError,
  type NodeRegistry,
  type OwnershipStore,
} from '@vms/cluster';
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { Client } from 'undici';
import { fakeControl } from '../../test/http/fixture.ts';
import { signToken } from '../auth/jwt.ts';
import { FakeClock, systemClock, type Clock } from '../core/clock.ts';
import { createMemoryDeviceRepository } from '../devices/device-repository.memory.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import { buildHttpApp } from '../http/app.ts';
import { createStandaloneNodeDirectory } from '../nodes/node-directory.standalone.ts';
import { createSelfOwnerDirectory } from '../ownership/owner-directory.standalone.ts';
import { createMemoryDeviceKeyIndex } from './device-index.memory.ts';
import { createDeviceResolver } from './device-resolver.ts';
import { NodeTracker } from './node-tracker.ts';
import { ChannelMemory } from './channel-memory.ts';
import { createEdgeRouting } from './edge-routing.ts';
import { OWNER_CACHE_TTL_MS, OwnerCache } from './owner-cache.ts';
import { DeviceTenants } from './device-tenants.ts';
import { createInboundClassifier } from './inbound-forward.ts';
import { createOwnerRouting } from './owner-routing.ts';
import { createOwnershipRecorder, type OwnershipRecorder } from './ownership-recorder.ts';

const KEY = 'owner-routing-test-key-0123456789abcdef';
const SECRET = 'a8f3k29slx7q';
const DEV_A = '34020000001320000001';
const DEV_B = '34020000001320000002';
const DEV_NONE = '34020000001320000009';
const CH_A = '34020000001310000001';
const silent = pino({ level: 'silent' });
const TTL = 60_000;

interface Shared {
  devices: DeviceRepository;
  store: OwnershipStore;
  registry: NodeRegistry;
}

interface Node {
  code: string;
  url: string;
  app: FastifyInstance;
  calls: { op: string; args: unknown[] }[];
  recorder: OwnershipRecorder;
  cache: OwnerCache;
  /** Requests fastify ran (the edge answers the others before fastify sees them). */
  fastifySeen: () => number;
}

const closers: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

async function shared(): Promise<Shared> {
  const devices = createMemoryDeviceRepository();
  const reg = { transport: 'UDP' as const, remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at: Date.now() };
  for (const id of [DEV_A, DEV_B, DEV_NONE]) await devices.registerDevice({ deviceId: id, ...reg });
  await devices.replaceChannels(
    DEV_A,
    [{ channelId: CH_A, name: 'Gate', manufacturer: null, model: null, owner: null, civilCode: null, address: null, parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: 1, extra: {} }],
    Date.now(),
  );
  return { devices, store: createMemoryOwnershipStore(), registry: createMemoryNodeRegistry() };
}

async function startNode(
  s: Shared,
  code: string,
  o: { secret?: string | null; store?: OwnershipStore | null; readTimeoutMs?: number; cacheClock?: Clock; logger?: Logger } = {},
): Promise<Node> {
  const secret = o.secret === undefined ? SECRET : o.secret;
  const store = o.store === undefined ? s.store : o.store;
  // wired as in cluster-wiring.ts: the owner cache follows this instance's own ownership changes
  const cache = new OwnerCache({ clock: o.cacheClock ?? systemClock });
  const recorder = createOwnershipRecorder({
    store: store ?? s.store,
    instanceId: code,
    ttlMs: TTL,
    checkIntervalMs: 3_600_000,
    clock: systemClock,
    log: silent,
    onLocalOwnershipChange: (deviceId) => cache.forget(deviceId),
  });
  recorder.onMoved(({ deviceId, newOwner }) => cache.remember(deviceId, newOwner));
  const tracker = new NodeTracker({ registry: s.registry, selfCode: code, onlineWindowMs: 60_000, clock: systemClock, minRefreshIntervalMs: 0 });
  const forwarder = secret === null ? null : createForwardClient({ originNode: code, secret, connectTimeoutMs: 300 });
  const fake = fakeControl();
  const readTimeoutMs = (): number => o.readTimeoutMs ?? 2000;
  const channelMemory = new ChannelMemory({ clock: o.cacheClock ?? systemClock });
  const inbound = createInboundClassifier(secret);
  const tenants = new DeviceTenants({ devices: s.devices, clock: o.cacheClock ?? systemClock });
  const app = buildHttpApp({
    instanceId: code,
    signingKey: KEY,
    storage: 'memory',
    devices: s.devices,
    control: fake.control,
    nodes: createStandaloneNodeDirectory({
      nodeCode: code, sipAddress: '127.0.0.1:5060', internalBaseUrl: () => '', cascadeNode: false,
      version: 't', startedAt: 0, clock: systemClock, devices: s.devices,
    }),
    owners: createSelfOwnerDirectory(code),
    clock: systemClock,
    logger: o.logger ?? silent,
    utcOffsetMinutes: 480,
    isVerifiedForward: (request) => inbound(request) === 'forwarded',
    ownerRouting: createOwnerRouting({
      instanceId: code,
      secret,
      inbound,
      owners: store,
      recorder,
      resolver: createDeviceResolver({ devices: s.devices, sessions: createMemoryDeviceKeyIndex(systemClock), sns: createMemoryDeviceKeyIndex(systemClock), channelMemory }),
      tenants,
      nodes: tracker,
      forwarder,
      readTimeoutMs,
      ownerCache: store === null ? null : cache,
    }),
    // wired as in cluster-wiring.ts: only where forwards can happen
    edgeRouting: store === null || forwarder === null ? null : createEdgeRouting({ instanceId: code, ownerCache: cache, channelMemory, tenants, nodes: tracker, recorder, forwarder, readTimeoutMs }),
  });
  let fastifySeen = 0;
  app.addHook('onRequest', async () => {
    fastifySeen++;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await s.registry.heartbeat({ code, sipHost: '127.0.0.1', sipPort: 5060, internalBaseUrl: url, cascadeNode: false, startedAt: new Date(), version: 't' }, 0);
  closers.push(() => app.close(), () => recorder.close(), async () => forwarder?.close());
  return { code, url, app, calls: fake.calls, recorder, cache, fastifySeen: () => fastifySeen };
}

const token = () => signToken({ tenantId: '000000', userId: 'u1', ttlSec: 600 }, KEY, Date.now());

async function call(node: Node, path: string, init: { method?: string; headers?: Record<string, string>; body?: string; token?: string } = {}) {
  const res = await fetch(`${node.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'blade-auth': `bearer ${init.token ?? (await token())}`, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type'), bytes, json: JSON.parse(bytes.toString()) as { code: number; success: boolean; msg: string } };
}

describe('owner routing hook (ROUTE-2..8)', () => {
  it('owner elsewhere: forwarded, and the caller gets exactly the bytes the owner answers directly', async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    const b = await startNode(s, 'node-b');
    const c = await startNode(s, 'node-c');
    await s.store.claim(DEV_A, 'node-a', TTL);
    await s.store.claim(DEV_B, 'node-b', TTL);

    const direct = await call(a, `/vms/device/info?deviceId=${DEV_A}`);
    const viaB = await call(b, `/vms/device/info?deviceId=${DEV_A}`);
    assert.equal(direct.json.code, 200);
    assert.deepEqual([viaB.status, viaB.type, viaB.bytes], [direct.status, direct.type, direct.bytes]);
    assert.equal(a.calls.filter((x) => x.op === 'info').length, 2, 'both executed by the owner');
    assert.equal(b.calls.length, 0);

    const viaC = await call(c, `/blade-iot/vms/device/status?deviceId=${DEV_B}`);
    assert.equal(viaC.json.code, 200);
    assert.deepEqual(b.calls.map((x) => x.op), ['status']);

    // by channel, POST with a body
    const ptz = await call(c, `/vms/ptz/control?channelId=${CH_A}&command=left&speed=9`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(ptz.json.code, 200);
    assert.deepEqual(a.calls.at(-1), { op: 'ptz', args: [{ deviceId: DEV_A, channelId: CH_A }, 'left', 9] });

    // the owner's refusals travel back unchanged too
    const bad = await call(b, `/vms/device/control?deviceId=${DEV_A}&action=explode`, { method: 'POST' });
    const badDirect = await call(a, `/vms/device/control?deviceId=${DEV_A}&action=explode`, { method: 'POST' });
    assert.deepEqual([bad.status, bad.bytes], [badDirect.status, badDirect.bytes]);
    assert.equal(bad.status, 400);
  });

  it('forwards the path and query exactly as received, body bytes, the token, and the protocol headers', async () => {
    const s = await shared();
    const b = await startNode(s, 'node-b');
    const seen: { url: string | undefined; headers: IncomingMessage['headers']; body: Buffer }[] = [];
    const raw: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(202, { 'content-type': 'text/x-owner; charset=gbk' });
        res.end(Buffer.from([0xc4, 0xe3, 0xba, 0xc3]));
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => raw.close(r)));
    const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    await s.registry.heartbeat({ code: 'node-x', sipHost: 'h', sipPort: 1, internalBaseUrl: rawUrl, cascadeNode: false, startedAt: new Date(), version: 't' }, 0);
    await s.store.claim(DEV_A, 'node-x', TTL);

    const path = `/blade-iot/vms/ptz/control?command=left&channelId=${CH_A}&speed=%2010&x=1&x=2`;
    const r2 = await fetch(`${b.url}${path}`, { method: 'POST', headers: { 'blade-auth': `bearer ${await token()}`, 'content-type': 'application/json' }, body: '{"a": 1 }' });
    assert.equal(r2.status, 202);
    assert.equal(r2.headers.get('content-type'), 'text/x-owner; charset=gbk');
    assert.deepEqual(Buffer.from(await r2.arrayBuffer()), Buffer.from([0xc4, 0xe3, 0xba, 0xc3]));
    const got = seen.at(-1);
    assert.ok(got !== undefined);
    assert.equal(got.url, path);
    assert.equal(got.body.toString(), '{"a": 1 }');
    assert.match(String(got.headers['blade-auth']), /^bearer /);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers[FORWARD_HEADERS.marker], 'node-b');
    assert.equal(got.headers[FORWARD_HEADERS.secret], SECRET);
  });

  it('forwarded requests run locally and are never forwarded again; forged ones are refused (ROUTE-3)', async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    const b = await startNode(s, 'node-b');
    await s.store.claim(DEV_A, 'node-a', TTL);
    const marked = await call(b, `/vms/device/info?deviceId=${DEV_A}`, { headers: { [FORWARD_HEADERS.marker]: 'node-c', [FORWARD_HEADERS.secret]: SECRET } });
    assert.equal(marked.json.code, 200);
    assert.deepEqual([a.calls.length, b.calls.length], [0, 1], 'ran on B although A owns it: no ping-pong');

    for (const headers of [
      { [FORWARD_HEADERS.marker]: 'node-c', [FORWARD_HEADERS.secret]: 'wrong' } as Record<string, string>,
      { [FORWARD_HEADERS.marker]: 'node-c' },
    ]) {
      const forged = await call(a, `/vms/device/info?deviceId=${DEV_A}`, { headers });
      assert.deepEqual([forged.status, forged.json.code, forged.json.success], [403, 4605, false]);
    }
    assert.equal(a.calls.length, 0);
  });

  it('a forwarded request is logged at info by the instance the operator called, not again by its owner', async () => {
    const lines = { a: [] as { msg: string; level: number; forwardId?: string }[], b: [] as { msg: string; level: number }[] };
    const capture = (into: { msg: string; level: number }[]): Logger =>
      pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (into.push(JSON.parse(chunk.toString()) as { msg: string; level: number }), done()) }));
    const s = await shared();
    const a = await startNode(s, 'node-a', { logger: capture(lines.a) });
    const b = await startNode(s, 'node-b', { logger: capture(lines.b) });
    await s.store.claim(DEV_A, 'node-a', TTL);
    await s.store.claim(DEV_B, 'node-b', TTL);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    const requestLog = new Set(['incoming request', 'request completed', 'request errored']);
    const info = (l: { msg: string; level: number }[]) => l.filter((x) => x.level >= 30 && requestLog.has(x.msg)).map((x) => x.msg);
    assert.deepEqual(info(lines.b), ['incoming request', 'request completed']);
    assert.deepEqual(info(lines.a), [], 'the owner logs the forward at debug only');
    assert.equal(lines.a.filter((x) => x.msg === 'forwarded request accepted').length, 1);
    // its own operators' requests the owner logs as usual
    assert.equal((await call(a, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.deepEqual(info(lines.a), ['incoming request', 'request completed']);
  });

  it('no secret: devices owned elsewhere are refused with a clear message, own devices work, inbound forwards refused (ROUTE-6)', async () => {
    const s = await shared();
    await startNode(s, 'node-a');
    const d = await startNode(s, 'node-d', { secret: null });
    await s.store.claim(DEV_A, 'node-a', TTL);
    await s.store.claim(DEV_B, 'node-d', TTL);
    const remote = await call(d, `/vms/device/info?deviceId=${DEV_A}`);
    assert.deepEqual([remote.status, remote.json.code], [200, 4602]);
    assert.match(remote.json.msg, /another node.*node-forward-secret/);
    assert.doesNotMatch(remote.json.msg, /node-a/, 'node names stay in the logs');
    assert.equal((await call(d, `/vms/device/info?deviceId=${DEV_B}`)).json.code, 200);
    const inbound = await call(d, `/vms/device/info?deviceId=${DEV_B}`, { headers: { [FORWARD_HEADERS.marker]: 'node-a', [FORWARD_HEADERS.secret]: SECRET } });
    assert.deepEqual([inbound.status, inbound.json.code], [403, 4605]);
  });

  it('no owner → 4601; owner node offline or gone → 4603, fast; owner hangs → 4604 (ROUTE-5, FAIL-1)', async () => {
    const s = await shared();
    const b = await startNode(s, 'node-b', { readTimeoutMs: 200 });
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_NONE}`)).json.code, 4601);

    // owner row says offline: no connection attempted
    const registry = s.registry;
    await s.store.claim(DEV_A, 'node-ghost', TTL);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 4603, 'unknown node');

    // owner row online but the process is gone (connection refused)
    const dead = await startNode(s, 'node-dead');
    await s.store.claim(DEV_A, 'node-dead', TTL);
    await dead.app.close();
    const t0 = Date.now();
    const results = await Promise.all(Array.from({ length: 10 }, () => call(b, `/vms/device/info?deviceId=${DEV_A}`)));
    assert.ok(Date.now() - t0 < 300, `took ${Date.now() - t0} ms`);
    assert.deepEqual([...new Set(results.map((r) => `${r.status}/${r.json.code}`))], ['200/4603']);

    // owner accepts but never answers: read timeout
    const hang: Server = createServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    closers.push(async () => {
      hang.closeAllConnections();
      await new Promise((r) => hang.close(r));
    });
    await registry.heartbeat({ code: 'node-hang', sipHost: 'h', sipPort: 1, internalBaseUrl: `http://127.0.0.1:${(hang.address() as AddressInfo).port}`, cascadeNode: false, startedAt: new Date(), version: 't' }, 0);
    await s.store.claim(DEV_A, 'node-hang', TTL);
    const slow = await call(b, `/vms/device/info?deviceId=${DEV_A}`);
    assert.deepEqual([slow.status, slow.json.code], [200, 4604]);
    // one failing owner does not affect B's own devices
    await s.store.claim(DEV_B, 'node-b', TTL);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_B}`)).json.code, 200);
  });

  it('store unreachable: own devices (local leases) still run here, others are offline (FAIL-3)', async () => {
    const s = await shared();
    const down: OwnershipStore = {
      ...s.store,
      ownerOf: async () => {
        throw new OwnershipUnavailableError('down');
      },
      claim: async () => {
        throw new OwnershipUnavailableError('down');
      },
    };
    const b = await startNode(s, 'node-b', { store: down });
    b.recorder.deviceSeen(DEV_B);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_B}`)).json.code, 200);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 4601);
  });

  it('claim vanished (store emptied) while the owner serves the device: the owner re-claims it and runs it, the others forward again', async () => {
    const s = await shared();
    const b = await startNode(s, 'node-b');
    const c = await startNode(s, 'node-c');
    b.recorder.deviceSeen(DEV_B); // verified REGISTER / keepalive on node-b
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await s.store.ownerOf(DEV_B), 'node-b');
    await s.store.releaseIfOwner(DEV_B, 'node-b'); // what an empty Redis restart does to the claim
    const onOwner = await call(b, `/vms/device/info?deviceId=${DEV_B}`);
    assert.deepEqual([onOwner.status, onOwner.json.code], [200, 200], 'not 4601 until the next keepalive');
    assert.equal(await s.store.ownerOf(DEV_B), 'node-b');
    assert.equal((await call(c, `/vms/device/info?deviceId=${DEV_B}`)).json.code, 200, 'forwarded to node-b again');
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_NONE}`)).json.code, 4601, 'a device it does not serve is not claimed');
    assert.equal(await s.store.ownerOf(DEV_NONE), null);
  });

  it('standalone: no store is consulted, unrouted or unresolvable requests go to the handler (ROUTE-8)', async () => {
    const s = await shared();
    const solo = await startNode(s, 'node-solo', { store: null });
    assert.equal((await call(solo, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    const s2 = await shared();
    const b = await startNode(s2, 'node-b');
    assert.equal((await call(b, '/vms/device/info')).status, 400, 'missing key: the handler says which parameter');
    assert.equal((await call(b, '/vms/ptz/control?channelId=34020000001310000077&command=left', { method: 'POST' })).status, 403, 'unknown channel: answered by the handler, to a tenant as another tenant\'s');
    const moved = b.recorder;
    moved.deviceSeen(DEV_A);
    await s2.store.claim(DEV_A, 'node-z', TTL);
    await call(b, `/vms/device/info?deviceId=${DEV_A}`);
    assert.equal(moved.isLocallyOwned(DEV_A), false, 'OWN-4: the routing lookup revealed the move');
  });
});

describe('owner cache in the routing hook (ROUTE-2, OWN-4)', () => {
  /** The shared store, counting owner reads. */
  function counted(store: OwnershipStore): { store: OwnershipStore; reads: () => number } {
    let n = 0;
    return {
      store: {
        ...store,
        ownerOf: (id) => {
          n++;
          return store.ownerOf(id);
        },
      },
      reads: () => n,
    };
  }

  it('repeated requests for one device read the store once per ttl, on the forwarding node and on the owner', async () => {
    const s = await shared();
    const counter = counted(s.store);
    const clock = new FakeClock(Date.now());
    const a = await startNode(s, 'node-a', { store: counter.store, cacheClock: clock });
    const b = await startNode(s, 'node-b', { store: counter.store, cacheClock: clock });
    await s.store.claim(DEV_A, 'node-a', TTL);
    for (let i = 0; i < 5; i++) assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    for (let i = 0; i < 5; i++) assert.equal((await call(a, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.equal(counter.reads(), 2, 'one read on B, one on A (a forwarded request is never looked up)');
    assert.equal(a.calls.length, 10);
    clock.advance(OWNER_CACHE_TTL_MS);
    await call(b, `/vms/device/info?deviceId=${DEV_A}`);
    assert.equal(counter.reads(), 3);
  });

  it('device moved: requests follow the new owner at most ttl after the claim; the new owner acts at once', async () => {
    const s = await shared();
    const clock = new FakeClock(Date.now());
    const a = await startNode(s, 'node-a', { cacheClock: clock });
    const b = await startNode(s, 'node-b', { cacheClock: clock });
    const c = await startNode(s, 'node-c', { cacheClock: clock });
    a.recorder.deviceSeen(DEV_A);
    await new Promise((r) => setTimeout(r, 20)); // the claim is written
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.equal((await call(c, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.equal(a.calls.length, 2);

    // the camera re-registers on node-c (OWN-4)
    c.recorder.deviceSeen(DEV_A);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await call(c, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.equal(c.calls.length, 1, 'the new owner runs it itself at once, its cached "node-a" dropped by its own claim');

    // node-b read "node-a" less than ttl ago: within the bound it may still go there
    clock.advance(OWNER_CACHE_TTL_MS - 1);
    await call(b, `/vms/device/info?deviceId=${DEV_A}`);
    assert.equal(a.calls.length, 3);
    // and never once the bound has passed
    clock.advance(1);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.deepEqual([a.calls.length, c.calls.length], [3, 2]);
    // the old owner's own lookups: reads the store after ttl, learns of the move, forwards
    assert.equal((await call(a, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.deepEqual([a.calls.length, c.calls.length], [3, 3]);
    assert.equal(a.recorder.isLocallyOwned(DEV_A), false);
  });

  it('a routing failure forgets the owner: the next request reads the store again', async () => {
    const s = await shared();
    const b = await startNode(s, 'node-b');
    const dead = await startNode(s, 'node-dead');
    await s.store.claim(DEV_A, 'node-dead', TTL);
    await dead.app.close();
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 4603);
    assert.equal(b.cache.get(DEV_A), undefined);
    const a = await startNode(s, 'node-a');
    await s.store.claim(DEV_A, 'node-a', TTL); // the camera came back on a live node
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.equal(a.calls.length, 1);
  });

  it('the forward secret proven on a connection is not trusted for another string on it (ROUTE-3)', async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    await s.store.claim(DEV_A, 'node-a', TTL);
    const client = new Client(a.url, { pipelining: 1 });
    closers.push(() => client.close());
    const send = async (secret: string | undefined): Promise<number> => {
      const headers: Record<string, string> = { 'blade-auth': `bearer ${await token()}`, [FORWARD_HEADERS.marker]: 'node-b' };
      if (secret !== undefined) headers[FORWARD_HEADERS.secret] = secret;
      const res = await client.request({ method: 'GET', path: `/vms/device/info?deviceId=${DEV_A}`, headers });
      const body = (await res.body.json()) as { code: number };
      return body.code;
    };
    // one connection (a single-connection client): proven, then wrong, missing, right again
    assert.deepEqual([await send(SECRET), await send('guess'), await send(undefined), await send(`${SECRET}x`), await send(SECRET)], [200, 4605, 4605, 4605, 200]);
    assert.equal(a.calls.length, 2);
  });
});

// The edge (http/edge.ts, edge-routing.ts): an operator's token is reused, so after the first request
// verified it and read the owner, later requests for the device are forwarded before fastify runs.
describe('owner routing at the HTTP edge', () => {
  /** Three nodes whose owner caches share a fake clock; DEV_A owned by node-a; one operator token. */
  async function threeNodesOnOneClock() {
    const s = await shared();
    const clock = new FakeClock(Date.now());
    const [a, b, c] = [await startNode(s, 'node-a', { cacheClock: clock }), await startNode(s, 'node-b', { cacheClock: clock }), await startNode(s, 'node-c', { cacheClock: clock })];
    await s.store.claim(DEV_A, 'node-a', TTL);
    return { s, clock, a, b, c, t: await token() };
  }

  it('forwards what it can decide from memory, with the bytes the owner answers directly; the rest goes through fastify', async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    const b = await startNode(s, 'node-b');
    await s.store.claim(DEV_A, 'node-a', TTL);
    const t = await token();
    const direct = await call(a, `/vms/device/info?deviceId=${DEV_A}`, { token: t });
    const first = await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t });
    assert.equal(b.fastifySeen(), 1, 'first request: token not verified here yet, owner not cached');
    const viaEdge = await call(b, `/blade-iot/vms/device/info?deviceId=${DEV_A}`, { token: t });
    assert.equal(b.fastifySeen(), 1, 'second request answered at the edge');
    for (const r of [first, viaEdge]) assert.deepEqual([r.status, r.type, r.bytes], [direct.status, direct.type, direct.bytes]);
    assert.equal(a.calls.filter((x) => x.op === 'info').length, 3);

    // POST with a body: passed on as received; the owner's refusal comes back unchanged
    const bad = await call(b, `/vms/device/control?deviceId=${DEV_A}&action=explode`, { method: 'POST', token: t, headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
    const badDirect = await call(a, `/vms/device/control?deviceId=${DEV_A}&action=explode`, { method: 'POST', token: t, headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
    assert.deepEqual([bad.status, bad.bytes], [badDirect.status, badDirect.bytes]);
    assert.equal(bad.status, 400);
    const good = await call(b, `/vms/device/control?deviceId=${DEV_A}&action=reboot`, { method: 'POST', token: t });
    assert.equal(good.json.code, 200);
    assert.equal(b.fastifySeen(), 1, 'both POSTs taken at the edge');

    // by channel: the first request looks the channel up (fastify's hook), the next ones are taken at the edge
    const ptz = `/vms/ptz/control?channelId=${CH_A}&command=left&speed=9`;
    assert.equal((await call(b, ptz, { method: 'POST', token: t })).json.code, 200);
    assert.equal(b.fastifySeen(), 2);
    assert.equal((await call(b, ptz, { method: 'POST', token: t })).json.code, 200);
    assert.equal(b.fastifySeen(), 2, 'channel → device remembered');
    assert.deepEqual(a.calls.filter((x) => x.op === 'ptz').length, 2);

    // not decidable from memory → fastify: an unverified token, an own device, a channel not looked up
    // lately, a repeated deviceId, a request marked as forwarded
    await s.store.claim(DEV_B, 'node-b', TTL);
    const seen = b.fastifySeen();
    const other = await signToken({ tenantId: '000000', userId: 'another-operator', ttlSec: 600 }, KEY, Date.now());
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: other })).json.code, 200); // a token B has not verified
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_B}`, { token: t })).json.code, 200);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_B}`, { token: t })).json.code, 200);
    assert.equal((await call(b, `/vms/ptz/control?channelId=34020000001310000077&command=left&speed=9`, { method: 'POST', token: t })).status, 403, 'unknown channel: as another tenant\'s');
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}&deviceId=${DEV_A}`, { token: t })).status, 400);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t, headers: { [FORWARD_HEADERS.marker]: 'node-x' } })).json.code, 4605);
    assert.equal(b.fastifySeen() - seen, 6);
    assert.deepEqual(b.calls.map((x) => x.op), ['info', 'info'], 'own device ran here both times');
  });

  it('owner gone while cached: 4603 at once, the same envelope the hook answers, and the owner forgotten', async () => {
    const s = await shared();
    const b = await startNode(s, 'node-b');
    const dead = await startNode(s, 'node-dead');
    await s.store.claim(DEV_A, 'node-dead', TTL);
    const t = await token();
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t })).json.code, 200);
    await dead.app.close();
    const seen = b.fastifySeen();
    const t0 = Date.now();
    const atEdge = await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t });
    assert.ok(Date.now() - t0 < 300, `took ${Date.now() - t0} ms`);
    assert.equal(b.fastifySeen(), seen, 'answered at the edge');
    assert.deepEqual([atEdge.status, atEdge.json.code], [200, 4603]);
    assert.equal(b.cache.get(DEV_A), undefined, 'forgotten: the next request reads the store');
    const viaHook = await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t });
    assert.equal(b.fastifySeen(), seen + 1, 'cache miss → fastify');
    assert.deepEqual([viaHook.status, viaHook.type, viaHook.bytes], [atEdge.status, atEdge.type, atEdge.bytes]);
  });

  it('follows a moved device within the owner cache bound, as the hook does', async () => {
    const { s, clock, a, b, c, t } = await threeNodesOnOneClock();
    for (let i = 0; i < 3; i++) assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t })).json.code, 200);
    assert.equal(a.calls.length, 3);
    await s.store.claim(DEV_A, 'node-c', TTL); // re-registered on node-c
    clock.advance(OWNER_CACHE_TTL_MS - 1);
    await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t });
    assert.equal(a.calls.length, 4, 'within the bound the cached owner may still act');
    clock.advance(1);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: t })).json.code, 200);
    assert.deepEqual([a.calls.length, c.calls.length], [4, 1]);
  });

  it('follows a channel moved to another device within the same bound', async () => {
    const { s, clock, a, b, c, t } = await threeNodesOnOneClock();
    await s.store.claim(DEV_B, 'node-c', TTL);
    const ptz = `/vms/ptz/control?channelId=${CH_A}&command=up&speed=3`;
    for (let i = 0; i < 2; i++) assert.equal((await call(b, ptz, { method: 'POST', token: t })).json.code, 200);
    assert.equal(b.fastifySeen(), 1, 'the second one at the edge');
    // the catalog moved the channel to DEV_B (owned by node-c)
    await s.devices.replaceChannels(DEV_A, [], Date.now());
    await s.devices.replaceChannels(DEV_B, [{ channelId: CH_A, name: 'Gate', manufacturer: null, model: null, owner: null, civilCode: null, address: null, parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: 1, extra: {} }], Date.now());
    clock.advance(OWNER_CACHE_TTL_MS);
    assert.equal((await call(b, ptz, { method: 'POST', token: t })).json.code, 200);
    assert.deepEqual(c.calls.at(-1), { op: 'ptz', args: [{ deviceId: DEV_B, channelId: CH_A }, 'up', 3] });
    assert.equal(a.calls.filter((x) => x.op === 'ptz').length, 2);
  });
});

describe('tenant check before routing (SPEC SEC-2)', () => {
  const OTHER = '100001';
  const DEV_UNKNOWN = '34020000001320000077';
  const tokenOf = (tenantId: string, role: 'tenant' | 'operator' = 'tenant') => signToken({ tenantId, userId: `u-${tenantId}-${role}`, ttlSec: 600, role }, KEY, Date.now());

  it("another tenant's device or channel: 403 on the entry instance, the same answer as an unknown id, nothing routed", async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    const b = await startNode(s, 'node-b');
    await s.store.claim(DEV_A, 'node-a', TTL);
    const foreign = await tokenOf(OTHER);
    const seenOnA = a.fastifySeen();
    const paths = [`/vms/device/info?deviceId=${DEV_A}`, `/vms/device/status?deviceId=${DEV_A}`, `/vms/device/catalog/sync?deviceId=${DEV_A}`];
    const unknown = await call(b, `/vms/device/info?deviceId=${DEV_UNKNOWN}`, { token: foreign });
    assert.equal(unknown.status, 403);
    for (const path of paths) {
      const r = await call(b, path, { token: foreign });
      assert.equal(r.status, 403, path);
      assert.equal(r.json.msg, unknown.json.msg, 'no existence oracle');
      assert.doesNotMatch(r.bytes.toString(), /node-/);
    }
    const ptz = await call(b, `/vms/ptz/control?channelId=${CH_A}&command=left&speed=9`, { method: 'POST', token: foreign });
    const ptzUnknown = await call(b, `/vms/ptz/control?channelId=34020000001310000077&command=left&speed=9`, { method: 'POST', token: foreign });
    assert.deepEqual([ptz.status, ptz.bytes.toString()], [ptzUnknown.status, ptzUnknown.bytes.toString()]);
    assert.equal(ptz.status, 403);
    // an offline device (no owner: 4601 for its own tenant) and a dead owner (4603) answer 403 too
    await s.store.claim(DEV_B, 'node-ghost', TTL);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_B}`)).json.code, 4603, 'its own tenant learns the routing state');
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_B}`, { token: foreign })).status, 403);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_NONE}`, { token: foreign })).status, 403);
    assert.equal(a.fastifySeen(), seenOnA, 'nothing was forwarded to the owner');
    assert.deepEqual([a.calls, b.calls], [[], []]);

    // the owner checks too: a verified forward carrying another tenant's token runs the handler's check
    const forwarded = await call(a, `/vms/device/info?deviceId=${DEV_A}`, { token: foreign, headers: { [FORWARD_HEADERS.marker]: 'node-b', [FORWARD_HEADERS.secret]: SECRET } });
    assert.equal(forwarded.status, 403);
    assert.deepEqual(a.calls, []);
  });

  it('the edge never forwards another tenant\'s device from memory: fastify answers 403', async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    const b = await startNode(s, 'node-b');
    await s.store.claim(DEV_A, 'node-a', TTL);
    const own = await token();
    const foreign = await tokenOf(OTHER);
    // the foreign token is verified once (a request of its own), the owner and tenant of DEV_A are remembered
    await call(b, `/vms/devices`, { token: foreign });
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: own })).json.code, 200);
    assert.equal((await call(b, `/vms/ptz/control?channelId=${CH_A}&command=left&speed=9`, { method: 'POST', token: own })).json.code, 200);
    const seen = b.fastifySeen();
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: own })).json.code, 200);
    assert.equal(b.fastifySeen(), seen, 'own tenant: taken at the edge');
    const r = await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: foreign });
    const ptz = await call(b, `/vms/ptz/control?channelId=${CH_A}&command=left&speed=9`, { method: 'POST', token: foreign });
    assert.deepEqual([r.status, ptz.status], [403, 403]);
    assert.equal(b.fastifySeen(), seen + 2, 'left to fastify, which refused');
    assert.equal(a.calls.filter((x) => x.op === 'info').length, 2);
    assert.equal(a.calls.filter((x) => x.op === 'ptz').length, 1);
  });

  it('the operator role (explicit claim) reaches every tenant\'s devices; unknown devices are routed as before', async () => {
    const s = await shared();
    const a = await startNode(s, 'node-a');
    const b = await startNode(s, 'node-b');
    await s.store.claim(DEV_A, 'node-a', TTL);
    const ops = await tokenOf(OTHER, 'operator');
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: ops })).json.code, 200);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_A}`, { token: ops })).json.code, 200, 'again through the edge');
    assert.equal(a.calls.filter((x) => x.op === 'info').length, 2);
    assert.equal((await call(b, `/vms/device/info?deviceId=${DEV_UNKNOWN}`, { token: ops })).json.code, 4601);
  });
});
