// The webhook receiver with the real hook handler and scripted edges (sessions, holder directory,
// forward client, node table): where each hook runs, what ZLM gets back, and that a hook is never
// forwarded twice or on a forged marker.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORWARD_HEADERS, ForwardConnectError, type ForwardClient, type ForwardRequest, type ForwardTarget } from '@vms/cluster';
import { createHookHandler, type MediaHookEvent } from '@vms/media';
import pino from 'pino';
import { createHookReceiver, type HookRequest } from './media-hooks.ts';

const NODE_SECRET = 'zlm-secret';
const FWD_SECRET = 'fwd-secret';
const STREAM = '34020000001320000001_34020000001310000001';

function setup(o: { held?: boolean; holder?: string | null | Error; online?: boolean; forwardFails?: boolean; clustered?: boolean; forwarding?: boolean } = {}) {
  const handled: MediaHookEvent[] = [];
  const forwards: { target: ForwardTarget; req: ForwardRequest }[] = [];
  const forwarder = {
    pendingCount: 0,
    close: async () => {},
    async forward(target: ForwardTarget, req: ForwardRequest) {
      forwards.push({ target, req });
      if (o.forwardFails === true) throw new ForwardConnectError('node-a', 'refused');
      return { forwardId: 'f1', status: 200, contentType: 'application/json; charset=utf-8', body: Buffer.from('{"code":0,"msg":"success","close":true}') };
    },
  } as unknown as ForwardClient;
  const lookups: string[] = [];
  const receive = createHookReceiver({
    self: 'node-b',
    hooks: createHookHandler({ lookupNode: (id) => (id === 'zlm-1' ? { secret: NODE_SECRET } : undefined) }),
    sessions: { onHook: (e) => void handled.push(e), holds: (nodeId, streamId) => o.held === true && nodeId === 'zlm-1' && streamId === STREAM },
    forwardSecret: FWD_SECRET,
    holders:
      o.clustered === false
        ? null
        : {
            claim: async () => {},
            release: async () => {},
            holderOf: async (nodeId, streamId) => {
              lookups.push(`${nodeId}/${streamId}`);
              if (o.holder instanceof Error) throw o.holder;
              return o.holder === undefined ? 'node-a' : o.holder;
            },
          },
    forwarder: o.forwarding === false ? null : forwarder,
    onlineBaseUrl: async (code) => (o.online === false ? null : `http://internal-${code}`),
  });
  return { receive, handled, forwards, lookups };
}

const noneReader = { mediaServerId: 'zlm-1', app: 'rtp', stream: STREAM, schema: 'rtsp', vhost: '__defaultVhost__' };
const PATH = `/blade-iot/vms/webhook/on_stream_none_reader?secret=${NODE_SECRET}`;

function req(over: Partial<HookRequest> = {}): HookRequest {
  const body = over.body ?? noneReader;
  return {
    name: 'on_stream_none_reader',
    body,
    rawBody: Buffer.from(JSON.stringify(body)),
    query: { secret: NODE_SECRET },
    headers: { 'content-type': 'application/json' },
    path: PATH,
    log: pino({ level: 'silent' }),
    ...over,
  };
}

const json = (b: unknown): unknown => (Buffer.isBuffer(b) ? JSON.parse(b.toString('utf8')) : b);

describe('media hook receiver', () => {
  it('a stream held here runs here, without a directory lookup', async () => {
    const t = setup({ held: true });
    const a = await t.receive(req());
    assert.equal(a.status, 200);
    assert.deepEqual(json(a.body), { code: 0, msg: 'success', close: true });
    assert.equal(t.handled.length, 1);
    assert.deepEqual([t.lookups, t.forwards], [[], []]);
  });

  it('a stream held elsewhere is forwarded to its holder, path and body as received; the holder’s answer goes back unchanged', async () => {
    const t = setup();
    const a = await t.receive(req());
    assert.deepEqual(t.lookups, [`zlm-1/${STREAM}`]);
    assert.equal(t.forwards.length, 1);
    const f = t.forwards[0]!;
    assert.deepEqual(f.target, { node: 'node-a', baseUrl: 'http://internal-node-a' });
    assert.equal(f.req.method, 'POST');
    assert.equal(f.req.path, PATH);
    assert.deepEqual(f.req.headers, { 'content-type': 'application/json' });
    assert.deepEqual(JSON.parse(Buffer.from(f.req.body ?? []).toString('utf8')), noneReader);
    assert.equal(a.status, 200);
    assert.equal(a.contentType, 'application/json; charset=utf-8');
    assert.ok(Buffer.isBuffer(a.body));
    assert.equal(a.body.toString(), '{"code":0,"msg":"success","close":true}');
    assert.equal(t.handled.length, 0, 'not handled here as well');
  });

  it('runs here when the holder is unknown, is this instance, is offline, cannot be reached, or the store is down', async () => {
    for (const o of [{ holder: null }, { holder: 'node-b' }, { online: false }, { forwardFails: true }, { holder: new Error('redis down') }]) {
      const t = setup(o);
      const a = await t.receive(req());
      assert.equal(a.status, 200, JSON.stringify(o));
      assert.deepEqual(json(a.body), { code: 0, msg: 'success', close: true });
      assert.equal(t.handled.length, 1, JSON.stringify(o));
    }
    assert.equal(setup({ online: false }).forwards.length, 0);
  });

  it('standalone, forwarding closed, and node-level hooks run where they land', async () => {
    const alone = setup({ clustered: false });
    await alone.receive(req());
    assert.deepEqual([alone.handled.length, alone.lookups.length], [1, 0]);
    const closed = setup({ forwarding: false });
    await closed.receive(req());
    assert.deepEqual([closed.handled.length, closed.forwards.length], [1, 0]);
    const ka = setup();
    const body = { mediaServerId: 'zlm-1', data: { MultiMediaSourceMuxer: 2 } };
    const a = await ka.receive(req({ name: 'on_server_keepalive', body, rawBody: Buffer.from(JSON.stringify(body)) }));
    assert.equal(a.status, 200);
    assert.deepEqual([ka.handled.map((e) => e.kind), ka.lookups.length], [['server_keepalive'], 0]);
  });

  it('a forwarded hook with the right secret runs here and is never forwarded again; a forged marker is refused', async () => {
    const t = setup();
    const fwd = await t.receive(req({ headers: { 'content-type': 'application/json', [FORWARD_HEADERS.marker]: 'node-c', [FORWARD_HEADERS.secret]: FWD_SECRET } }));
    assert.equal(fwd.status, 200);
    assert.deepEqual([t.handled.length, t.lookups.length, t.forwards.length], [1, 0, 0]);
    const forged = await t.receive(req({ headers: { [FORWARD_HEADERS.marker]: 'node-c', [FORWARD_HEADERS.secret]: 'guess' } }));
    assert.equal(forged.status, 403);
    assert.deepEqual(json(forged.body), { code: -100, msg: 'forwarded hook refused' });
    assert.equal(t.handled.length, 1, 'nothing handled for the forged one');
  });

  it('a hook without the node secret is refused before any lookup or forward', async () => {
    const t = setup();
    const a = await t.receive(req({ query: { secret: 'wrong' } }));
    assert.equal(a.status, 401);
    assert.equal((json(a.body) as { code: number }).code, -100);
    assert.deepEqual([t.handled.length, t.lookups.length, t.forwards.length], [0, 0, 0]);
  });
});
