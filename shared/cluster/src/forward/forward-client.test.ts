// The forward client against a real loopback HTTP server (port from the OS): bytes in and out
// unchanged, protocol headers, keep-alive reuse, one typed error per failure phase, close().
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { ForwardConnectError, ForwardResponseError, ForwardTimeoutError, StoreClosedError } from '../errors.ts';
import { createForwardClient, toForwardError, type ForwardRequest } from './forward-client.ts';
import { FORWARD_HEADERS } from './forward-protocol.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    connections: () => connections,
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const request = (over: Partial<ForwardRequest> = {}): ForwardRequest => ({
  method: 'GET',
  path: '/vms/device/info?deviceId=34020000001320000001',
  headers: { 'blade-auth': 'bearer T' },
  body: null,
  readTimeoutMs: 2000,
  ...over,
});

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

describe('forward client', () => {
  it('sends method, path+query, body bytes, caller headers and the protocol headers; returns status, type, bytes', async () => {
    const answer = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe4, 0xb8, 0xad, 0xff, 0x22, 0x7d]); // not valid UTF-8 on purpose
    const srv = await serve((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' });
      res.end(answer);
    });
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's3cret' });
    closers.push(() => client.close());
    const body = Buffer.from('{"x":"\u4e2d"}');
    const res = await client.forward(
      { node: 'node-a', baseUrl: `${srv.baseUrl}/prefix/` },
      request({
        method: 'POST',
        path: '/blade-iot/vms/ptz/control?channelId=1&command=left&x=%20a',
        headers: {
          'Blade-Auth': 'bearer T',
          'content-type': 'application/json',
          [FORWARD_HEADERS.marker]: 'spoofed',
          [FORWARD_HEADERS.secret]: 'spoofed',
        },
        body,
      }),
    );
    assert.equal(res.status, 403);
    assert.equal(res.contentType, 'application/json; charset=utf-8');
    assert.deepEqual(res.body, answer);
    assert.match(res.forwardId, /^[0-9a-f]{8}-[0-9a-z]+$/);
    const s = srv.seen[0];
    assert.ok(s !== undefined);
    assert.equal(s.method, 'POST');
    assert.equal(s.url, '/prefix/blade-iot/vms/ptz/control?channelId=1&command=left&x=%20a');
    assert.deepEqual(s.body, body);
    assert.equal(s.headers['blade-auth'], 'bearer T');
    assert.equal(s.headers['content-type'], 'application/json');
    assert.equal(s.headers[FORWARD_HEADERS.marker], 'node-b', 'the caller cannot choose the marker');
    assert.equal(s.headers[FORWARD_HEADERS.secret], 's3cret');
    assert.equal(s.headers[FORWARD_HEADERS.forwardId], res.forwardId);
  });

  it('keeps connections alive across forwards', async () => {
    const srv = await serve((_req, res) => res.end('ok'));
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    closers.push(() => client.close());
    for (let i = 0; i < 20; i++) await client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request());
    // undici may open a second connection while the first is finishing its previous answer
    assert.ok(srv.connections() <= 2, `${srv.connections()} connections for 20 forwards`);
    assert.equal(client.pendingCount, 0);
  });

  it('nothing listening: ForwardConnectError(refused), fast', async () => {
    const srv = await serve(() => undefined);
    await srv.close(); // the port is now closed
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    closers.push(() => client.close());
    const t0 = Date.now();
    await assert.rejects(client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request()), (err: unknown) => {
      assert.ok(err instanceof ForwardConnectError);
      assert.equal(err.reason, 'refused');
      assert.equal(err.target, 'node-a');
      return true;
    });
    assert.ok(Date.now() - t0 < 500);
  });

  it('owner accepts but never answers: ForwardTimeoutError(headers) after the read timeout', async () => {
    const srv = await serve(() => undefined);
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    closers.push(() => client.close());
    const t0 = Date.now();
    await assert.rejects(client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request({ readTimeoutMs: 150 })), (err: unknown) => {
      assert.ok(err instanceof ForwardTimeoutError);
      assert.equal(err.phase, 'headers');
      return true;
    });
    const took = Date.now() - t0;
    assert.ok(took >= 140 && took < 1500, `took ${took} ms`);
  });

  it('the read timeout holds to its value: a 1.5 s headers wait fails by 1.75 s (undici\'s coarse timers took ~2 s)', async () => {
    const srv = await serve(() => undefined);
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    closers.push(() => client.close());
    const t0 = performance.now();
    await assert.rejects(client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request({ readTimeoutMs: 1500 })), (err: unknown) => {
      assert.ok(err instanceof ForwardTimeoutError);
      assert.equal(err.phase, 'headers');
      assert.equal(err.timeoutMs, 1500);
      return true;
    });
    const took = performance.now() - t0;
    assert.ok(took >= 1490 && took < 1750, `took ${took.toFixed(0)} ms`);
  });

  it('the body timeout counts from the last chunk, not from the dispatch', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // a chunk every 100 ms for 600 ms, then the end: longer than the 300 ms read timeout in all, never between chunks
      let n = 0;
      const tick = setInterval(() => {
        if (++n < 6) res.write(' ');
        else {
          clearInterval(tick);
          res.end('{}');
        }
      }, 100);
    });
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    closers.push(() => client.close());
    const res = await client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request({ readTimeoutMs: 300 }));
    assert.equal(res.body.toString().trim(), '{}');
  });

  it('owner stalls mid-body: ForwardTimeoutError(body)', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    closers.push(() => client.close());
    await assert.rejects(
      client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request({ readTimeoutMs: 150 })),
      (err: unknown) => err instanceof ForwardTimeoutError && err.phase === 'body',
    );
  });

  it('connection dropped mid-answer, or an answer over the size cap: ForwardResponseError', async () => {
    const srv = await serve((req, res) => {
      if (req.url?.includes('big') === true) {
        res.end(Buffer.alloc(4096, 0x61));
        return;
      }
      res.writeHead(200, { 'content-length': '100' });
      res.write('short');
      res.socket?.destroy();
    });
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's', maxResponseBytes: 1024 });
    closers.push(() => client.close());
    const target = { node: 'node-a', baseUrl: srv.baseUrl };
    await assert.rejects(client.forward(target, request()), ForwardResponseError);
    await assert.rejects(client.forward(target, request({ path: '/big' })), ForwardResponseError);
  });

  it('close() rejects pending forwards with StoreClosedError, and later ones too', async () => {
    const srv = await serve(() => undefined);
    closers.push(srv.close);
    const client = createForwardClient({ originNode: 'node-b', secret: 's' });
    const inFlight = client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request({ readTimeoutMs: 10_000 }));
    const outcome = inFlight.then(() => null, (err: unknown) => err);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(client.pendingCount, 1);
    await client.close();
    await client.close();
    assert.ok((await outcome) instanceof StoreClosedError);
    assert.equal(client.pendingCount, 0);
    await assert.rejects(client.forward({ node: 'node-a', baseUrl: srv.baseUrl }, request()), StoreClosedError);
  });

  it('maps failures by code, never by message', () => {
    const e = (code: string) => Object.assign(new Error('whatever'), { code });
    assert.equal((toForwardError(e('UND_ERR_CONNECT_TIMEOUT'), 'n', 1) as ForwardConnectError).reason, 'timeout');
    assert.equal((toForwardError(e('EHOSTUNREACH'), 'n', 1) as ForwardConnectError).reason, 'unreachable');
    assert.equal((toForwardError(new AggregateError([e('ECONNREFUSED')]), 'n', 1) as ForwardConnectError).reason, 'refused');
    assert.ok(toForwardError(e('UND_ERR_SOCKET'), 'n', 1) instanceof ForwardResponseError);
    assert.ok(toForwardError(new Error('ECONNREFUSED'), 'n', 1) instanceof ForwardResponseError);
  });

  it('refuses to exist without a secret (ROUTE-6)', () => {
    assert.throws(() => createForwardClient({ originNode: 'node-b', secret: '' }), RangeError);
  });
});
