// The keepalive shortcut (stateless handler) against the full MESSAGE handler. For every request the
// system's answer is "shortcut, or full path when it declines"; it must equal what the full path alone
// does: status, keepalive time per device, stored charset, online flag, uplink events. The second
// table pins which requests the shortcut takes itself (the common shapes) and which it leaves alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { parseSipMessage, type Flow, type ServerContext, type SipRequest, type StatelessRequest } from '@vms/sip';
import { FakeClock } from '../core/clock.ts';
import { createMemoryDeviceRepository } from '../devices/device-repository.memory.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import { createDeviceEvents } from '../events/device-events.ts';
import { DEFAULT_DEVICE_LIMITS } from './device-admission.ts';
import { createDeviceFlows, type DeviceFlows } from './device-flows.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import { createMessageHandlers, fromPrefixOf, fromStartsWith, fromUserIs, type MessageHandlers } from './message.handler.ts';

const DEV = '34020000001320000001';
const DEV2 = '34020000001320000002';
const EXPIRED = '34020000001320000003';
const UNKNOWN = '34020000001320000099';
/** Online in the store, within its lifetime, not registered on this instance (another one, or before a restart). */
const STORED = '34020000001320000004';
const T0 = 1_700_000_000_000;
const flow: Flow = { transport: 'udp', remoteAddress: '192.168.1.64', remotePort: 5060, localAddress: '10.0.0.5', localPort: 5060 };

interface World {
  handlers: MessageHandlers;
  devices: DeviceRepository;
  flows: DeviceFlows;
  clock: FakeClock;
  uplinks: string[];
}

/**
 * Where the registered devices' flows are: DEV on `flow`, and DEV2 and EXPIRED on the same flow (as behind
 * an edge or in a rig: the shortcut then finds the device by id) or each on its own port of that address
 * (as a fleet: the shortcut finds it by its flow, udp-flow-index.ts).
 */
type Layout = 'one flow' | 'a flow each';
const LAYOUTS: readonly Layout[] = ['one flow', 'a flow each'];
const flowOf = (layout: Layout, i: number): Flow => (layout === 'one flow' || i === 0 ? flow : { ...flow, remotePort: flow.remotePort + 2 * i });

async function world(limits?: DeviceSideDeps['limits'], layout: Layout = 'one flow'): Promise<World> {
  const log = pino({ level: 'silent' });
  const devices = createMemoryDeviceRepository();
  const flows = createDeviceFlows();
  const events = createDeviceEvents(log);
  const clock = new FakeClock(T0);
  const uplinks: string[] = [];
  events.on('uplink', (e) => void uplinks.push(`${e.deviceId}:${e.kind}`));
  for (const [i, [deviceId, expiresAt]] of ([[DEV, T0 + 3_600_000], [DEV2, T0 + 3_600_000], [EXPIRED, T0 - 1]] as const).entries()) {
    const bound = flowOf(layout, i);
    await devices.registerDevice({ deviceId, transport: 'UDP', remoteIp: bound.remoteAddress, remotePort: bound.remotePort, expiresSec: 3600, at: T0 - 60_000 });
    flows.register({ deviceId, flow: bound, charset: 'GB2312', gbVersion: '2016', registeredAt: T0 - 60_000, expiresAt });
  }
  await devices.registerDevice({ deviceId: STORED, transport: 'UDP', remoteIp: flow.remoteAddress, remotePort: flow.remotePort, expiresSec: 3600, at: T0 - 60_000 });
  const deps = { devices, flows, events, clock, log, utcOffsetMinutes: 480, ...(limits === undefined ? {} : { limits }) } as unknown as DeviceSideDeps;
  const handlers = createMessageHandlers(deps, { handle: async () => {} }, (deviceId) => `Digest realm="3402000000", nonce="for-${deviceId}"`);
  return { handlers, devices, flows, clock, uplinks };
}

interface Outcome {
  status: number;
  /** WWW-Authenticate of the answer (full path). */
  challenge: string | undefined;
  by: 'shortcut' | 'full';
  keepalive: Record<string, number | null>;
  charset: Record<string, string | undefined>;
  online: Record<string, boolean | undefined>;
  uplinks: string[];
}

/** The full handler on a parsed request, with a context that records the final status. */
async function full(w: World, req: SipRequest, from: Flow = flow): Promise<{ status: number; challenge: string | undefined }> {
  let status = 0;
  let challenge: string | undefined;
  const ctx = {
    request: req,
    flow: from,
    signal: new AbortController().signal,
    get finalSent() {
      return status !== 0;
    },
    toTag: 'tag',
    reply(s: number, o?: { headers?: Record<string, string> }) {
      status = s;
      challenge = o?.headers?.['WWW-Authenticate'];
      return {} as never;
    },
    accept() {
      throw new Error('not for MESSAGE');
    },
  } satisfies ServerContext;
  await w.handlers.message(req, ctx as ServerContext);
  return { status, challenge };
}

/** The stateless handler sees what the datagram shortcut hands it (ua/server.ts): raw header values, the body, the datagram as text. */
function view(req: SipRequest, raw: Buffer): StatelessRequest {
  const h = req.headers;
  const text = raw.toString('latin1');
  return { method: req.method, body: req.body, callId: h.get('Call-ID') ?? '', from: h.get('From') ?? '', contentType: h.get('Content-Type'), topVia: h.getLines('Via')[0] ?? '', text, bodyStart: text.length - req.body.length, hasHeader: (name) => h.get(name) !== undefined, header: (name) => h.get(name) };
}

async function outcome(w: World, raw: Buffer, shortcut: boolean, from: Flow = flow): Promise<Outcome> {
  const req = parseSipMessage(raw, { trustDatagramEnd: true }) as SipRequest;
  w.clock.advance(1000);
  const fast = shortcut ? w.handlers.keepalive(view(req, raw), from) : undefined;
  const answer = fast === undefined ? await full(w, req, from) : { status: fast, challenge: undefined };
  await new Promise((r) => setImmediate(r)); // markOnline settles
  const ids = [DEV, DEV2, EXPIRED, UNKNOWN, STORED];
  const stored = await Promise.all(ids.map((id) => w.devices.getDevice(id)));
  return {
    status: answer.status,
    challenge: answer.challenge,
    by: fast === undefined ? 'full' : 'shortcut',
    keepalive: Object.fromEntries(ids.map((id, i) => [id, stored[i]?.keepaliveAt ?? null])),
    charset: Object.fromEntries(ids.map((id) => [id, w.flows.get(id)?.charset])),
    online: Object.fromEntries(ids.map((id, i) => [id, stored[i]?.online])),
    uplinks: [...w.uplinks],
  };
}

const body = (o: { id?: string; decl?: string; cmd?: string; extra?: string; sep?: string } = {}): string => {
  const sep = o.sep ?? '\r\n';
  return [o.decl ?? '<?xml version="1.0" encoding="GB2312"?>', '<Notify>', `<CmdType>${o.cmd ?? 'Keepalive'}</CmdType>`, '<SN>17</SN>', `<DeviceID>${o.id ?? DEV}</DeviceID>`, `<Status>OK</Status>${o.extra ?? ''}`, '</Notify>', ''].join(sep);
};

function request(o: { from?: string; type?: string | null; body?: string | Buffer; compact?: boolean } = {}): Buffer {
  const b = o.body ?? body();
  const bytes = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
  const c = o.compact === true;
  const lines = [
    'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
    `${c ? 'v' : 'Via'}: SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK1`,
    `${c ? 'f' : 'From'}: ${o.from ?? `<sip:${DEV}@3402000000>;tag=k1`}`,
    `${c ? 't' : 'To'}: <sip:34020000002000000001@3402000000>`,
    `${c ? 'i' : 'Call-ID'}: 1@192.168.1.64`,
    'CSeq: 20 MESSAGE',
    ...(o.type === null ? [] : [`${c ? 'c' : 'Content-Type'}: ${o.type ?? 'Application/MANSCDP+xml'}`]),
    `${c ? 'l' : 'Content-Length'}: ${bytes.length}`,
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

const [beforeStatus, afterStatus] = body().split('OK</Status>') as [string, string];
/** `<Status>正常</Status>` in GB2312 bytes: well-formed, a keepalive for the codec, not ASCII for the scan. */
const gb2312Status = Buffer.concat([Buffer.from(beforeStatus, 'latin1'), Buffer.from([0xd5, 0xfd, 0xb3, 0xa3]), Buffer.from(`</Status>${afterStatus}`, 'latin1')]);

const CASES: Array<[string, Buffer, 'shortcut' | 'full']> = [
  ['SIPp keepalive', request(), 'shortcut'],
  ['compact header names', request({ compact: true }), 'shortcut'],
  ['no Content-Type', request({ type: null }), 'shortcut'],
  ['display name in From', request({ from: `"IPC 1" <sip:${DEV}@3402000000>;tag=k1` }), 'shortcut'],
  ['addr-spec From', request({ from: `sip:${DEV}@3402000000;tag=k1` }), 'shortcut'],
  ['one-line body, LF, no Status', request({ body: body({ sep: '\n' }).replace('<Status>OK</Status>', '') }), 'shortcut'],
  ['whitespace between elements', request({ body: body({ sep: ' \t\r\n  ' }) }), 'shortcut'],
  ['another SN', request({ body: body().replace('<SN>17</SN>', '<SN>18</SN>') }), 'shortcut'],
  ['DeviceID differs from From', request({ body: body({ id: DEV2 }) }), 'full'],
  ['From names another registered device than DeviceID', request({ from: `<sip:${DEV2}@3402000000>;tag=k1` }), 'full'],
  ['a longer SN than the shape allows', request({ body: body().replace('<SN>17</SN>', `<SN>${'1'.repeat(21)}</SN>`) }), 'full'],
  ['From has another user part', request({ from: `<sip:${DEV}0@3402000000>;tag=k1` }), 'full'],
  ['From with a password', request({ from: `<sip:${DEV}:pw@3402000000>;tag=k1` }), 'full'],
  ['From unterminated', request({ from: `<sip:${DEV}@3402000000;tag=k1` }), 'full'],
  ['From in upper case scheme', request({ from: `<SIP:${DEV}@3402000000>;tag=k1` }), 'full'],
  ['truncated body', request({ body: body().slice(0, -14) }), 'full'],
  ['GB2312 text in the body', request({ body: gb2312Status }), 'full'],
  ['UTF-8 declared (charset change)', request({ body: body({ decl: '<?xml version="1.0" encoding="UTF-8"?>' }) }), 'full'],
  ['lower-case CmdType', request({ body: body({ cmd: 'keepalive' }) }), 'full'],
  ['a fault list', request({ body: body({ extra: `<Info><DeviceID>${DEV2}</DeviceID></Info>` }) }), 'full'],
  ['another content type', request({ type: 'text/plain' }), 'full'],
  ['content type with parameters', request({ type: 'Application/MANSCDP+xml;charset=GB2312' }), 'full'],
  ['not a keepalive', request({ body: body({ cmd: 'Catalog' }) }), 'full'],
  ['unknown device', request({ from: `<sip:${UNKNOWN}@3402000000>;tag=k1`, body: body({ id: UNKNOWN }) }), 'full'],
  ['expired registration', request({ from: `<sip:${EXPIRED}@3402000000>;tag=k1`, body: body({ id: EXPIRED }) }), 'full'],
  ['registered only in the store', request({ from: `<sip:${STORED}@3402000000>;tag=k1`, body: body({ id: STORED }) }), 'full'],
];

/** SPEC SEC-1: flows other than the one DEV's verified REGISTER bound (`flow`). */
const OTHER_FLOWS: Array<[string, Flow]> = [
  ['another address', { ...flow, remoteAddress: '203.0.113.9' }],
  ['another port of the same address (NAT rebinding or a neighbour behind the NAT)', { ...flow, remotePort: 5061 }],
  ['TCP from the same address and port', { ...flow, transport: 'tcp', connectionId: 7 }],
];

describe('keepalive shortcut', () => {
  for (const layout of LAYOUTS) {
    for (const [name, raw, expectedBy] of CASES) {
      it(`answers as the full path does (${layout}): ${name}`, async () => {
        const fullOnly = await outcome(await world(undefined, layout), raw, false);
        const withShortcut = await outcome(await world(undefined, layout), raw, true);
        assert.equal(withShortcut.by, expectedBy);
        assert.deepEqual({ ...withShortcut, by: 'full' }, fullOnly);
      });
    }
  }

  for (const [name, raw, expectedBy] of CASES) {
    it(`answers as the full path does after a keepalive gave the device its body's shape: ${name}`, async () => {
      const fullOnly = await world(undefined, 'a flow each');
      const withShortcut = await world(undefined, 'a flow each');
      await outcome(fullOnly, request(), false);
      assert.equal((await outcome(withShortcut, request(), true)).by, 'shortcut');
      assert.notEqual(withShortcut.flows.get(DEV)?.keepaliveShape ?? null, null, 'the shape kept');
      assert.equal(withShortcut.flows.get(DEV)?.fromPrefix, `<sip:${DEV}@3402000000>`, "the From's start kept");
      const got = await outcome(withShortcut, raw, true);
      assert.equal(got.by, expectedBy);
      assert.deepEqual({ ...got, by: 'full' }, await outcome(fullOnly, raw, false));
    });
  }

  for (const [name, raw, expectedBy] of CASES) {
    it(`answers as the full path does after a keepalive with a bare From URI gave the device its body's shape and no From start: ${name}`, async () => {
      const fullOnly = await world(undefined, 'a flow each');
      const withShortcut = await world(undefined, 'a flow each');
      const bare = request({ from: `sip:${DEV}@3402000000;tag=k9` });
      await outcome(fullOnly, bare, false);
      assert.equal((await outcome(withShortcut, bare, true)).by, 'shortcut');
      assert.equal(withShortcut.flows.get(DEV)?.fromPrefix, false, 'no From start: not tried again');
      const got = await outcome(withShortcut, raw, true);
      assert.equal(got.by, expectedBy);
      assert.deepEqual({ ...got, by: 'full' }, await outcome(fullOnly, raw, false));
    });
  }

  it('a body of no shape: a first one leaves the device without (not tried again), a later one keeps the shape', async () => {
    const reordered = request({ body: body().replace(`<SN>17</SN>\r\n<DeviceID>${DEV}</DeviceID>`, `<DeviceID>${DEV}</DeviceID>\r\n<SN>17</SN>`) });
    const w = await world(undefined, 'a flow each');
    assert.equal((await outcome(w, reordered, true)).by, 'shortcut');
    assert.equal(w.flows.get(DEV)?.keepaliveShape, false);
    assert.equal((await outcome(w, request(), true)).by, 'shortcut', 'the scan still reads it');
    assert.equal(w.flows.get(DEV)?.keepaliveShape, false);
    const v = await world(undefined, 'a flow each');
    await outcome(v, request(), true);
    const shape = v.flows.get(DEV)?.keepaliveShape;
    assert.ok(shape);
    assert.equal((await outcome(v, reordered, true)).by, 'shortcut');
    assert.equal(v.flows.get(DEV)?.keepaliveShape, shape);
  });

  it("a fleet's device found by its flow: a keepalive naming another registered device from it goes to the full path (401)", async () => {
    const w = await world(undefined, 'a flow each');
    assert.equal(w.flows.soleOnFlow(flow)?.deviceId, DEV);
    const got = await outcome(w, request({ from: `<sip:${DEV2}@3402000000>;tag=k1`, body: body({ id: DEV2 }) }), true);
    assert.deepEqual([got.by, got.status, got.challenge, got.uplinks], ['full', 401, `Digest realm="3402000000", nonce="for-${DEV2}"`, []]);
    assert.equal((await outcome(w, request({ from: `<sip:${DEV2}@3402000000>;tag=k1`, body: body({ id: DEV2 }) }), true, flowOf('a flow each', 1))).by, 'shortcut');
  });

  it('the flow index follows re-registration from another flow and forgetting', async () => {
    const w = await world(undefined, 'a flow each');
    const moved: Flow = { ...flow, remoteAddress: '192.168.1.65' };
    w.flows.register({ deviceId: DEV, flow: moved, charset: 'GB2312', gbVersion: '2016', registeredAt: T0, expiresAt: T0 + 3_600_000 });
    assert.equal(w.flows.soleOnFlow(flow), undefined);
    const old = await outcome(w, request(), true);
    assert.deepEqual([old.by, old.status], ['full', 401]);
    assert.equal((await outcome(w, request(), true, { ...moved })).by, 'shortcut');
    w.flows.forget(DEV);
    assert.equal(w.flows.soleOnFlow(moved), undefined);
    assert.deepEqual((await outcome(w, request(), true, { ...moved })).by, 'full');
  });

  it('a device marked offline is brought back online the same way', async () => {
    const a = await world();
    const b = await world();
    for (const w of [a, b]) {
      await w.devices.markOffline([DEV]);
      (w.flows.get(DEV) as { online: boolean }).online = false;
    }
    const fullOnly = await outcome(a, request(), false);
    const withShortcut = await outcome(b, request(), true);
    assert.equal(withShortcut.by, 'shortcut');
    assert.deepEqual({ ...withShortcut, by: 'full' }, fullOnly);
    assert.equal(withShortcut.online[DEV], true);
  });

  it('after the full path stored a new charset, the next keepalive takes the shortcut', async () => {
    const w = await world();
    const utf8 = request({ body: body({ decl: '<?xml version="1.0" encoding="UTF-8"?>' }) });
    assert.equal((await outcome(w, utf8, true)).by, 'full');
    const second = await outcome(w, utf8, true);
    assert.deepEqual([second.by, second.status, second.charset[DEV]], ['shortcut', 200, 'UTF-8']);
  });
});

describe('SEC-1: only the bound flow speaks for a device', () => {
  for (const layout of LAYOUTS) for (const [name, other] of OTHER_FLOWS) {
    for (const [what, raw] of [['keepalive', request()], ['catalog notify', request({ body: body({ cmd: 'Catalog' }) })]] as const) {
      it(`${what} from ${name} (${layout}): 401 with a challenge for the device, nothing recorded, the binding kept`, async () => {
        const w = await world(undefined, layout);
        const keepaliveBefore = (await w.devices.getDevice(DEV))?.keepaliveAt ?? null;
        const got = await outcome(w, raw, true, other);
        assert.deepEqual([got.by, got.status, got.challenge], ['full', 401, `Digest realm="3402000000", nonce="for-${DEV}"`]);
        assert.equal(got.keepalive[DEV], keepaliveBefore, 'no keepalive time recorded');
        assert.deepEqual(got.uplinks, [], 'no uplink: no ownership claim or renewal');
        assert.equal(w.flows.get(DEV)?.flow, flow, 'requests still go to the bound flow');
      });
    }
  }

  it('a TCP-bound device: a new connection from the same address and port is another flow', async () => {
    const w = await world();
    const tcp: Flow = { ...flow, transport: 'tcp', connectionId: 3 };
    w.flows.register({ deviceId: DEV, flow: tcp, charset: 'GB2312', gbVersion: '2016', registeredAt: T0, expiresAt: T0 + 3_600_000 });
    assert.equal((await outcome(w, request(), true, { ...tcp })).status, 200, 'the same connection (another Flow object)');
    const got = await outcome(w, request(), true, { ...tcp, connectionId: 4 });
    assert.deepEqual([got.by, got.status, got.uplinks.length], ['full', 401, 1]);
  });

  it('registered only in the store (restart, or an instance that died): 401, not taken over', async () => {
    const w = await world();
    const got = await outcome(w, request({ from: `<sip:${STORED}@3402000000>;tag=k1`, body: body({ id: STORED }) }), true);
    assert.deepEqual([got.status, got.challenge, got.uplinks], [401, `Digest realm="3402000000", nonce="for-${STORED}"`, []]);
    assert.equal(w.flows.get(STORED), undefined);
  });
});

describe('keepalive shortcut behind a SIP edge (SEC-1: edge flow + the device flow it names)', () => {
  const edgeFlow: Flow = { ...flow, remoteAddress: '10.9.9.8', remotePort: 5070 };
  const BOUND = 'dGVzdA.AAAA';
  const through = (edgeVia: string): Buffer =>
    Buffer.from(request().toString('latin1').replace('Via: SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK1', `Via: ${edgeVia}\r\nVia: SIP/2.0/UDP 192.168.1.64:5060;rport=5060;branch=z9hG4bK1;received=192.168.1.64`), 'latin1');
  const behindEdge = async (): Promise<World> => {
    const w = await world();
    w.flows.register({ deviceId: DEV, flow: edgeFlow, charset: 'GB2312', gbVersion: '2016', registeredAt: T0 - 60_000, expiresAt: T0 + 3_600_000, edgeFlow: BOUND, path: null });
    return w;
  };
  const cases: [string, string, 'shortcut' | 'full', number][] = [
    ['the bound device flow, as the edge writes it', `SIP/2.0/UDP 10.9.9.8:5070;branch=z9hG4bKe1;vms-f=${BOUND}`, 'shortcut', 200],
    ['the bound flow then another parameter', `SIP/2.0/UDP 10.9.9.8:5070;branch=z9hG4bKe1;vms-f=${BOUND};received=10.9.9.8`, 'shortcut', 200],
    ['another device flow', 'SIP/2.0/UDP 10.9.9.8:5070;branch=z9hG4bKe1;vms-f=b3RoZXI.BBBB', 'full', 401],
    ['no device flow named', 'SIP/2.0/UDP 10.9.9.8:5070;branch=z9hG4bKe1', 'full', 401],
    // the shortcut steps aside; the parser keeps the first of a repeated parameter
    ['the parameter twice (in another case)', `SIP/2.0/UDP 10.9.9.8:5070;branch=z9hG4bKe1;vms-f=${BOUND};VMS-F=b3RoZXI.BBBB`, 'full', 200],
    ['LWS in the hop (not the edge\'s shape)', `SIP/2.0/UDP 10.9.9.8:5070 ;branch=z9hG4bKe1;vms-f=${BOUND}`, 'full', 200],
  ];
  for (const [name, via, by, status] of cases) {
    it(`${name}: ${by}, ${status}, as the full path answers`, async () => {
      const fullOnly = await outcome(await behindEdge(), through(via), false, edgeFlow);
      const withShortcut = await outcome(await behindEdge(), through(via), true, edgeFlow);
      assert.deepEqual([withShortcut.by, withShortcut.status], [by, status]);
      assert.deepEqual({ ...withShortcut, by: 'full' }, fullOnly);
    });
  }
});

describe('a device moved here by a SIP edge (its shard died or drains): 404 at its next message', () => {
  const edgeFlow: Flow = { ...flow, remoteAddress: '10.9.9.8', remotePort: 5070 };
  const moved = (id: string, cmd = 'Keepalive'): Buffer =>
    Buffer.from(
      request({ from: `<sip:${id}@3402000000>;tag=k1`, body: body({ id, cmd }) })
        .toString('latin1')
        .replace('Via: SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK1', 'Via: SIP/2.0/UDP 10.9.9.8:5070;branch=z9hG4bKe1;vms-f=bW92ZWQ.AAAA\r\nVia: SIP/2.0/UDP 192.168.1.64:5060;rport=5060;branch=z9hG4bK1;received=192.168.1.64'),
      'latin1',
    );
  for (const [what, id] of [
    ['registered on another shard (the store has it online)', STORED],
    ['unknown to the store', UNKNOWN],
  ] as const) {
    for (const cmd of ['Keepalive', 'Catalog']) {
      it(`${what}, ${cmd}: 404 without a challenge (a 401 invites a credential retry of the MESSAGE, not a REGISTER), nothing recorded or taken over`, async () => {
        const w = await world();
        const before = (await w.devices.getDevice(id))?.keepaliveAt ?? null;
        const got = await outcome(w, moved(id, cmd), true, edgeFlow);
        assert.deepEqual([got.by, got.status, got.challenge, got.uplinks], ['full', 404, undefined, []]);
        assert.equal(got.keepalive[id], before, 'no keepalive time recorded');
        assert.equal(w.flows.get(id), undefined);
      });
    }
  }

  it('the same device straight to the shard (no edge hop) still gets 401 with a challenge', async () => {
    const w = await world();
    const got = await outcome(w, request({ from: `<sip:${STORED}@3402000000>;tag=k1`, body: body({ id: STORED }) }), true);
    assert.deepEqual([got.status, got.challenge], [401, `Digest realm="3402000000", nonce="for-${STORED}"`]);
  });
});

describe('messages naming no device registered here: bounded per source address', () => {
  it('past the burst an address gets 503 + Retry-After, registered devices on it are not charged, other addresses go on', async () => {
    const w = await world({ ...DEFAULT_DEVICE_LIMITS, unboundRatePerSec: 1, unboundBurst: 5 });
    const stranger = (n: number): Buffer => request({ from: `<sip:3402000000132${String(1000 + n).padStart(7, '0')}@3402000000>;tag=k1`, body: body({ id: DEV }) });
    const statuses: number[] = [];
    for (let n = 0; n < 7; n++) statuses.push((await full(w, parseSipMessage(stranger(n), { trustDatagramEnd: true }) as SipRequest)).status);
    assert.deepEqual(statuses, [404, 404, 404, 404, 404, 503, 503]);
    assert.equal((await outcome(w, request(), false)).status, 200, 'the registered device on the same address is answered');
    const elsewhere: Flow = { ...flow, remoteAddress: '192.168.1.65' };
    assert.equal((await full(w, parseSipMessage(stranger(99), { trustDatagramEnd: true }) as SipRequest, elsewhere)).status, 404);
  });
});

describe('the per-address bound behind a SIP edge', () => {
  const EDGE = '10.9.9.9';
  const viaEdge = (n: number, vmsF: string): Buffer =>
    Buffer.from(
      request({ from: `<sip:3402000000132${String(2000 + n).padStart(7, '0')}@3402000000>;tag=k1`, body: body({ id: DEV }) })
        .toString('latin1')
        .replace('Via: SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK1', `Via: SIP/2.0/UDP ${EDGE}:5060;branch=z9hG4bKedge${n};vms-f=${vmsF}\r\nVia: SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK1`),
      'latin1',
    );
  const statuses = async (w: World, edgeFlows: string[]): Promise<number[]> => {
    const out: number[] = [];
    const from: Flow = { ...flow, remoteAddress: EDGE };
    for (const [n, f] of edgeFlows.entries()) out.push((await full(w, parseSipMessage(viaEdge(n, f), { trustDatagramEnd: true }) as SipRequest, from)).status);
    return out;
  };

  it('a configured edge is charged per device flow it names: one flood behind it does not starve the others', async () => {
    const w = await world({ ...DEFAULT_DEVICE_LIMITS, unboundRatePerSec: 1, unboundBurst: 2, edgeAddresses: [EDGE] });
    assert.deepEqual(await statuses(w, ['aaa', 'aaa', 'aaa', 'bbb', 'ccc']), [404, 404, 503, 404, 404]);
  });

  it('an address that is not a configured edge cannot mint buckets by writing the parameter itself', async () => {
    const w = await world({ ...DEFAULT_DEVICE_LIMITS, unboundRatePerSec: 1, unboundBurst: 2 });
    assert.deepEqual(await statuses(w, ['aaa', 'bbb', 'ccc', 'ddd']), [404, 404, 503, 503]);
  });
});

describe('fromUserIs', () => {
  it('reads the user of the From URI in the plain forms only', () => {
    assert.equal(fromUserIs(`<sip:${DEV}@3402000000>;tag=1`, DEV), true);
    assert.equal(fromUserIs(`"cam 1" <sip:${DEV}@3402000000>`, DEV), true);
    assert.equal(fromUserIs(`cam <sip:${DEV}@host:5060>`, DEV), true);
    assert.equal(fromUserIs(`sip:${DEV}@host;tag=1`, DEV), true);
    assert.equal(fromUserIs(`<sip:${DEV}@host`, DEV), false);
    assert.equal(fromUserIs(`"a<b" <sip:${DEV}@host>`, DEV), false);
    assert.equal(fromUserIs(`"a\\"b" <sip:${DEV}@host>`, DEV), false);
    assert.equal(fromUserIs(`<sips:${DEV}@host>`, DEV), false);
    assert.equal(fromUserIs(`<sip:${DEV}1@host>`, DEV), false);
    assert.equal(fromUserIs(`<sip:${DEV.slice(1)}@host>`, DEV), false);
    // a user of the same length that differs in one place, at either end
    assert.equal(fromUserIs(`<sip:${DEV.slice(0, -1)}9@host>`, DEV.slice(0, -1) + '8'), false);
    assert.equal(fromUserIs(`<sip:9${DEV.slice(1)}@host>`, '8' + DEV.slice(1)), false);
    assert.equal(fromUserIs(`sip:${DEV}`, DEV), false);
    assert.equal(fromUserIs(`<sip:${DEV}@>`, DEV), true); // the host is the full path's to judge
    // the id written further on (host, parameters) with another user of the same length before `@`
    assert.equal(fromUserIs(`<sip:${'9'.repeat(DEV.length)}@${DEV}>;tag=${DEV}`, DEV), false);
    assert.equal(fromUserIs(`"${DEV}" <sip:${'9'.repeat(DEV.length)}@h>`, DEV), false);
  });
});

describe('fromPrefixOf / fromStartsWith (the From checked by the start of the last one that passed)', () => {
  const FROMS = [
    `<sip:${DEV}@3402000000>;tag=1`,
    `<sip:${DEV}@3402000000>;tag=2`,
    `<sip:${DEV}@3402000000>`,
    `<sip:${DEV}@3402000000>>`,
    `<sip:${DEV}@3402000000;transport=udp>;tag=1`,
    `<sip:${DEV}@340200000>;tag=1`,
    `<sip:${DEV}@34020000000>;tag=1`,
    `"cam 1" <sip:${DEV}@3402000000>;tag=1`,
    `"cam 1"  <sip:${DEV}@3402000000>;tag=1`,
    `cam <sip:${DEV}@3402000000>;tag=1`,
    `"a<b" <sip:${DEV}@3402000000>;tag=1`,
    `sip:${DEV}@3402000000;tag=1`,
    `sip:${DEV}@3402000000;tag=<1>`,
    `<sip:${DEV}@3402000000`,
    `<sip:${DEV}1@3402000000>;tag=1`,
    `<sip:${DEV2}@3402000000>;tag=1`,
    `<sip:${DEV.slice(1)}@3402000000>;tag=1`,
    `<sips:${DEV}@3402000000>;tag=1`,
    `<sip:${DEV}:pw@3402000000>;tag=1`,
    `<sip:${DEV}@>`,
    `<sip:${DEV}@3402000000>`.slice(0, -1),
    '',
  ];

  it('a From that starts with the prefix of one that passed fromUserIs passes it too; the prefix only when it passed, in <…>', () => {
    let prefixes = 0;
    for (const first of FROMS) {
      for (const id of [DEV, DEV2]) {
        const prefix = fromPrefixOf(first, id);
        assert.equal(prefix !== undefined, fromUserIs(first, id) && first.includes('<'), `${first} ${id}`);
        if (prefix === undefined) continue;
        prefixes++;
        assert.ok(fromStartsWith(first, prefix), first);
        assert.equal(prefix.at(-1), '>');
        // every From, and every From cut or extended after the prefix: starting with it implies fromUserIs
        for (const next of FROMS.flatMap((f) => [f, f.slice(0, prefix.length), f.slice(0, prefix.length - 1), `${prefix}${f}`])) {
          if (fromStartsWith(next, prefix)) assert.equal(fromUserIs(next, id), true, `${next} after ${first}`);
        }
      }
    }
    assert.ok(prefixes >= 8, `prefixes made: ${prefixes}`);
  });
});

describe('large bodies (SEC-3: decoded off the event loop, never for an unregistered sender)', () => {
  const catalog = (items: number, id = DEV): string => {
    const list = Array.from({ length: items }, (_, i) => `<Item><DeviceID>340200000013100${String(i).padStart(5, '0')}</DeviceID><Name>c${i}</Name><Status>ON</Status></Item>`).join('');
    return `<?xml version="1.0" encoding="GB2312"?>\r\n<Response><CmdType>Catalog</CmdType><SN>5</SN><DeviceID>${id}</DeviceID><SumNum>${items}</SumNum><DeviceList Num="${items}">${list}</DeviceList></Response>`;
  };

  it('a registered device\'s 40 KiB catalog is decoded on a worker and handled like a small one', async () => {
    const w = await world();
    try {
      const got = await outcome(w, request({ body: catalog(500) }), false);
      assert.deepEqual([got.status, got.uplinks], [200, [`${DEV}:message`]]);
      const bad = await outcome(w, request({ body: `${catalog(500).slice(0, -12)}<Broken>` }), false);
      assert.equal(bad.status, 400, 'a body the worker refuses is refused as a small one would be');
    } finally {
      await w.handlers.close();
    }
  });

  it('an unregistered or unbound sender gets 404 / 401 before any decode (a malformed body shows none was tried)', async () => {
    const w = await world();
    try {
      const broken = `${catalog(500, UNKNOWN).slice(0, -12)}<Broken>`;
      assert.equal((await outcome(w, request({ from: `<sip:${UNKNOWN}@3402000000>;tag=k1`, body: broken }), false)).status, 404);
      assert.equal((await outcome(w, request({ from: `<sip:${STORED}@3402000000>;tag=k1`, body: broken }), false)).status, 401);
    } finally {
      await w.handlers.close();
    }
  });
});
