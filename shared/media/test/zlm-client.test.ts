// ZlmClient's wire format and error mapping against tiny local HTTP servers that answer the way a
// ZLM node (or a broken one) would. The happy paths against a stand-in media node with real RTP are
// in test/integration/media-zlm-client.test.ts.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, describe, it } from 'node:test';
import { ZLM_CALL_CHANNEL, createZlmClient, createZlmClients, type ZlmCallError, type ZlmCallEvent, type ZlmClient } from '../src/index.ts';

const SECRET = 'top secret&=?';
const servers: Server[] = [];
const clients: ZlmClient[] = [];
const netServers: NetServer[] = [];

async function fakeNode(handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void): Promise<string> {
  const srv = createServer((req, res) => handler(req, res, new URL(req.url ?? '/', 'http://x')));
  servers.push(srv);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

function client(apiBaseUrl: string, opts = {}): ZlmClient {
  const c = createZlmClient({ id: 'zlm-a', apiBaseUrl, secret: SECRET }, { connectTimeoutMs: 300, requestTimeoutMs: 400, ...opts });
  clients.push(c);
  return c;
}

const json = (res: ServerResponse, body: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

function rejectsWith(code: string, check: (e: ZlmCallError) => boolean = () => true) {
  return (e: ZlmCallError): boolean => {
    assert.equal(e.code, code, e.message);
    assert.equal(e.name, 'ZlmCallError');
    assert.ok(!e.message.includes(SECRET), 'the secret never appears in error messages');
    return check(e);
  };
}

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  for (const s of servers) s.closeAllConnections();
  netServers.forEach((s) => s.close());
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

describe('ZlmClient wire format', () => {
  it('GET /index/api/<name> with the secret and snake_case parameters; base path kept', async () => {
    const seen: URL[] = [];
    const base = await fakeNode((_req, res, url) => {
      seen.push(url);
      json(res, { code: 0, port: 30002, hit: 1, local_port: 40000 });
    });
    const c = client(`${base}/zlm/`);
    assert.deepEqual(await c.openRtpServer({ streamId: 's 1', tcpMode: 'tcp-active', ssrc: '0200000001', reUsePort: true }), { port: 30002 });
    assert.deepEqual(await c.closeRtpServer('s 1'), { hit: true });
    assert.deepEqual(await c.startSendRtp({ stream: 's 1', ssrc: '1', dstUrl: '10.0.0.9', dstPort: 9000 }), { localPort: 40000 });
    const [open, close, send] = seen;
    assert.equal(open?.pathname, '/zlm/index/api/openRtpServer');
    assert.deepEqual(Object.fromEntries(open?.searchParams ?? []), { secret: SECRET, port: '0', tcp_mode: '2', stream_id: 's 1', re_use_port: '1', ssrc: '0200000001' });
    assert.deepEqual(Object.fromEntries(close?.searchParams ?? []), { secret: SECRET, stream_id: 's 1' });
    assert.deepEqual(Object.fromEntries(send?.searchParams ?? []), {
      secret: SECRET,
      vhost: '__defaultVhost__',
      app: 'rtp',
      stream: 's 1',
      ssrc: '1',
      dst_url: '10.0.0.9',
      dst_port: '9000',
      is_udp: '1',
    });
  });

  it('parses getMediaList, getRtpInfo and getServerConfig answers, tolerating string numbers and missing data', async () => {
    const answers: Record<string, unknown> = {
      getMediaList: { code: 0, data: [{ app: 'rtp', stream: 's', schema: 'rtsp', vhost: '__defaultVhost__', readerCount: '2', totalReaderCount: 3, originType: 3, aliveSecond: 5 }] },
      getRtpInfo: { code: 0, exist: true, peer_ip: '10.0.0.50', peer_port: 5000, local_ip: '0.0.0.0', local_port: '30002' },
      getServerConfig: { code: 0, data: [{ 'general.mediaServerId': 'zlm-a', 'http.port': 80 }] },
    };
    const base = await fakeNode((_req, res, url) => json(res, answers[url.pathname.split('/').pop() ?? ''] ?? { code: 0 }));
    const c = client(base);
    assert.deepEqual(await c.getMediaList({ stream: 's' }), [
      { app: 'rtp', stream: 's', schema: 'rtsp', vhost: '__defaultVhost__', readerCount: 2, totalReaderCount: 3, originType: 3, aliveSecond: 5, bytesSpeed: undefined },
    ]);
    assert.deepEqual(await c.getRtpInfo('s'), { exist: true, peerIp: '10.0.0.50', peerPort: 5000, localIp: '0.0.0.0', localPort: 30002 });
    assert.deepEqual(await c.getServerConfig(), { 'general.mediaServerId': 'zlm-a', 'http.port': '80' });
    answers.getMediaList = { code: 0 };
    answers.getRtpInfo = { code: 0, exist: false };
    assert.deepEqual(await c.getMediaList(), []);
    assert.deepEqual(await c.getRtpInfo('s'), { exist: false });
  });
});

describe('ZlmClient errors', () => {
  it('code != 0 → MEDIA_ERR_API with ZLM code and msg', async () => {
    const base = await fakeNode((_req, res) => json(res, { code: -300, msg: 'This stream_id already exists' }));
    await assert.rejects(
      client(base).openRtpServer({ streamId: 's' }),
      rejectsWith('MEDIA_ERR_API', (e) => e.zlmCode === -300 && e.zlmMsg === 'This stream_id already exists' && e.api === 'openRtpServer' && e.nodeId === 'zlm-a' && !e.transient),
    );
  });

  it('connection refused → MEDIA_ERR_UNREACHABLE, fast', async () => {
    const base = await fakeNode(() => undefined);
    const dead = servers.pop();
    await new Promise((r) => dead?.close(r));
    const t0 = performance.now();
    await assert.rejects(client(base).getServerConfig(), rejectsWith('MEDIA_ERR_UNREACHABLE', (e) => e.transient));
    assert.ok(performance.now() - t0 < 300);
  });

  it('connect timeout → MEDIA_ERR_UNREACHABLE, well before the request timeout', async () => {
    // TCP accepted but the TLS handshake never answered: the connect phase cannot finish, a stand-in
    // for a host that drops SYNs (external addresses are not reliable test fixtures)
    const srv = createNetServer(() => undefined);
    netServers.push(srv);
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const t0 = performance.now();
    await assert.rejects(client(url, { connectTimeoutMs: 200, requestTimeoutMs: 5000 }).getServerConfig(), rejectsWith('MEDIA_ERR_UNREACHABLE', (e) => e.transient));
    // undici checks connect timeouts on a coarse timer wheel (about 1 s resolution)
    assert.ok(performance.now() - t0 < 2500);
  });

  it('a node that accepts and never answers → MEDIA_ERR_TIMEOUT after the request timeout', async () => {
    const base = await fakeNode(() => undefined);
    const t0 = performance.now();
    await assert.rejects(client(base).getMediaList(), rejectsWith('MEDIA_ERR_TIMEOUT', (e) => e.transient));
    const took = performance.now() - t0;
    assert.ok(took >= 350 && took < 1500, `took ${took} ms`);
  });

  it('a body that trickles past the deadline → MEDIA_ERR_TIMEOUT', async () => {
    const base = await fakeNode((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"code":0,');
      setTimeout(() => res.end('"data":[]}'), 1000).unref();
    });
    await assert.rejects(client(base).getMediaList(), rejectsWith('MEDIA_ERR_TIMEOUT'));
  });

  it('HTTP 500, non-JSON, JSON without code, missing port → MEDIA_ERR_BAD_RESPONSE', async () => {
    const bodies = [
      (res: ServerResponse) => res.writeHead(500).end('oops'),
      (res: ServerResponse) => res.writeHead(200).end('<html>'),
      (res: ServerResponse) => json(res, { port: 1 }),
      (res: ServerResponse) => json(res, [1]),
      (res: ServerResponse) => json(res, { code: 0 }),
    ];
    let i = 0;
    const base = await fakeNode((_req, res) => bodies[i++]?.(res));
    const c = client(base);
    for (let n = 0; n < bodies.length; n++) await assert.rejects(c.openRtpServer({ streamId: 's' }), rejectsWith('MEDIA_ERR_BAD_RESPONSE'));
  });

  it('an oversized answer is cut off → MEDIA_ERR_BAD_RESPONSE', async () => {
    const base = await fakeNode((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.alloc(64 * 1024, 0xff)));
    await assert.rejects(client(base, { maxSnapBytes: 1024 }).getSnap({ url: 'rtsp://x/rtp/s' }), rejectsWith('MEDIA_ERR_BAD_RESPONSE'));
  });

  it('getSnap: JPEG bytes; a JSON error envelope is MEDIA_ERR_API; a PNG is not a snapshot', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0xff, 0xd9]);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const answers = [
      (res: ServerResponse) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg),
      (res: ServerResponse) => json(res, { code: -1, msg: 'snap failed' }),
      (res: ServerResponse) => res.writeHead(200, { 'content-type': 'image/png' }).end(png),
    ];
    let i = 0;
    const base = await fakeNode((_req, res) => answers[i++]?.(res));
    const c = client(base);
    assert.deepEqual(await c.getSnap({ url: 'rtsp://127.0.0.1/rtp/s' }), jpeg);
    await assert.rejects(c.getSnap({ url: 'x' }), rejectsWith('MEDIA_ERR_API', (e) => e.zlmCode === -1));
    await assert.rejects(c.getSnap({ url: 'x' }), rejectsWith('MEDIA_ERR_BAD_RESPONSE'));
  });

  it('close: pending and later calls reject with MEDIA_ERR_CLOSED; close is idempotent', async () => {
    const base = await fakeNode(() => undefined);
    const c = client(base, { requestTimeoutMs: 5000 });
    const pending = assert.rejects(c.getMediaList(), rejectsWith('MEDIA_ERR_CLOSED'));
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    await Promise.all([c.close(), c.close()]);
    await pending;
    assert.ok(performance.now() - t0 < 1000, 'close does not wait for calls in flight');
    await assert.rejects(c.getMediaList(), rejectsWith('MEDIA_ERR_CLOSED'));
  });
});

describe('ZlmClient diagnostics', () => {
  it('publishes one event per call on the diagnostics channel, without the secret', async () => {
    const events: ZlmCallEvent[] = [];
    const onEvent = (m: unknown): void => void events.push(m as ZlmCallEvent);
    subscribe(ZLM_CALL_CHANNEL, onEvent);
    try {
      const answers = [{ code: 0, hit: 0 }, { code: -1, msg: 'x' }];
      let i = 0;
      const base = await fakeNode((_req, res) => json(res, answers[i++]));
      const c = client(base);
      await c.closeRtpServer('s');
      await assert.rejects(c.closeRtpServer('s'));
    } finally {
      unsubscribe(ZLM_CALL_CHANNEL, onEvent);
    }
    assert.deepEqual(
      events.map((e) => [e.nodeId, e.api, e.errorCode, typeof e.durationMs]),
      [
        ['zlm-a', 'closeRtpServer', undefined, 'number'],
        ['zlm-a', 'closeRtpServer', 'MEDIA_ERR_API', 'number'],
      ],
    );
    assert.ok(!JSON.stringify(events).includes(SECRET));
  });
});

describe('ZlmClients', () => {
  it('one client per node, replaced when the URL or secret changes', async () => {
    const set = createZlmClients();
    const n = { id: 'zlm-a', apiBaseUrl: 'http://127.0.0.1:1', secret: 'a' };
    const c1 = set.clientFor(n);
    assert.equal(set.clientFor({ ...n }), c1);
    const c2 = set.clientFor({ ...n, secret: 'b' });
    assert.notEqual(c2, c1);
    await set.close();
    await set.close();
    assert.throws(() => set.clientFor(n), { code: 'MEDIA_ERR_CLOSED' });
    await assert.rejects(c2.getMediaList(), rejectsWith('MEDIA_ERR_CLOSED'));
  });
});
