// SPEC SEC-3 on real sockets: slow clients are cut off by the header and request timeouts (node
// answers 408 and closes), bodies over the limit get 413 (media hooks, which need no token, have a
// small one), one address may hold only so many connections, and the defaults bound all of it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_HTTP_LIMITS } from '../../src/http/http-server.ts';
import type { HttpDeps } from '../../src/http/handler.types.ts';
import { buildFixture } from './fixture.ts';

/** A hook receiver that answers like ZLM expects; the test is about what reaches it. */
const media = {
  receiveHook: async () => ({ status: 200, contentType: 'application/json', body: '{"code":0}' }),
} as unknown as NonNullable<HttpDeps['media']>;

async function listening(limits?: HttpDeps['limits']) {
  const f = await buildFixture({ media, ...(limits === undefined ? {} : { limits }) });
  await f.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = f.app.server.address() as net.AddressInfo;
  return { f, port, close: () => f.app.close() };
}

/** A raw client: what it received, and when the server closed it. */
async function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => {});
  const closed = once(socket, 'close').then(() => performance.now());
  return { socket, closed, received: () => received };
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function trickle(socket: net.Socket, text: string, everyMs: number): () => void {
  let i = 0;
  const t = setInterval(() => {
    if (socket.destroyed || i >= text.length) return;
    socket.write(text[i++] ?? '');
  }, everyMs);
  return () => clearInterval(t);
}

describe('HTTP bounds', () => {
  it('closes a client whose headers trickle in past the headers timeout (408)', async () => {
    const s = await listening({ headersTimeoutMs: 500 });
    try {
      const c = await rawClient(s.port);
      const t0 = performance.now();
      const stop = trickle(c.socket, `GET /vms/devices HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(1000)}`, 30);
      const at = await c.closed;
      stop();
      assert.ok(at - t0 < 3000, `closed after ${Math.round(at - t0)} ms`);
      assert.match(c.received(), /^HTTP\/1\.1 408 /);
    } finally {
      await s.close();
    }
  });

  it('closes a slow body on a media hook (no token needed) after the request timeout (408)', async () => {
    const s = await listening({ requestTimeoutMs: 800 });
    try {
      const c = await rawClient(s.port);
      const t0 = performance.now();
      c.socket.write('POST /vms/webhook/on_stream_changed?secret=x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n');
      const stop = trickle(c.socket, `{"a":"${'b'.repeat(59_990)}"}`, 20);
      const at = await c.closed;
      stop();
      assert.ok(at - t0 >= 700 && at - t0 < 4000, `closed after ${Math.round(at - t0)} ms`);
      assert.match(c.received(), /^HTTP\/1\.1 408 /);
    } finally {
      await s.close();
    }
  });

  it('answers 413 to a media hook body over 64 KB and to an API body over 1 MiB (defaults)', async () => {
    const s = await listening();
    try {
      const hook = await fetch(`http://127.0.0.1:${s.port}/vms/webhook/on_play?secret=x`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: 'x'.repeat(DEFAULT_HTTP_LIMITS.webhookBodyLimit) }),
      });
      assert.equal(hook.status, 413);
      assert.equal(((await hook.json()) as { code: number }).code, 413);
      const small = await fetch(`http://127.0.0.1:${s.port}/vms/webhook/on_play?secret=x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"app":"rtp"}' });
      assert.equal(small.status, 200);
      const api = await fetch(`http://127.0.0.1:${s.port}/vms/device/catalog/sync?deviceId=34020000001320000001`, {
        method: 'POST',
        headers: { ...(await s.f.auth()), 'content-type': 'application/json' },
        body: JSON.stringify({ a: 'x'.repeat(DEFAULT_HTTP_LIMITS.bodyLimit) }),
      });
      assert.equal(api.status, 413);
    } finally {
      await s.close();
    }
  });

  it('refuses connections from one address over the per-address cap', async () => {
    const s = await listening({ maxConnectionsPerIp: 3 });
    try {
      const clients = [];
      for (let i = 0; i < 3; i++) clients.push(await rawClient(s.port));
      const fourth = await rawClient(s.port);
      const closedFourth = await Promise.race([fourth.closed.then(() => true), sleep(2000).then(() => false)]);
      assert.equal(closedFourth, true);
      const first = clients[0];
      assert.ok(first !== undefined);
      first.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'); // the others still work
      for (let i = 0; i < 100 && !first.received().includes('200 OK'); i++) await sleep(20);
      assert.match(first.received(), /^HTTP\/1\.1 200 OK/);
      for (const c of clients) c.socket.destroy();
    } finally {
      await s.close();
    }
  });

  it('the default server has every bound set', async () => {
    const s = await listening();
    try {
      const server = s.f.app.server;
      assert.equal(server.headersTimeout, DEFAULT_HTTP_LIMITS.headersTimeoutMs);
      assert.equal(server.requestTimeout, DEFAULT_HTTP_LIMITS.requestTimeoutMs);
      assert.equal(server.keepAliveTimeout, DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs);
      assert.equal(server.timeout, DEFAULT_HTTP_LIMITS.idleTimeoutMs);
      assert.equal(server.maxConnections, DEFAULT_HTTP_LIMITS.maxConnections);
      for (const v of Object.values(DEFAULT_HTTP_LIMITS)) assert.ok(Number.isFinite(v) && v > 0);
    } finally {
      await s.close();
    }
  });
});
