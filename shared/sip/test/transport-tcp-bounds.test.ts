// SPEC SEC-3 on real TCP sockets: a message must be completed within its deadline (not reset by each
// byte), a message over the size limit is answered 513 (RFC 3261 §21.5.14) and the connection closed,
// one source address may hold only so many connections, and a connection with no message is closed.
// Each bound is also checked with the stack's DEFAULT settings where that is cheap enough.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_TCP_CONNECTIONS_PER_IP } from '../src/transport/transport.ts';
import { rawRequest, rawTcp, startStack } from './support/stack-fixtures.ts';

const closedWithin = async (socket: Socket, ms: number): Promise<boolean> => {
  if (socket.destroyed || socket.readyState === 'closed') return true;
  const closed = once(socket, 'close').then(() => true);
  return Promise.race([closed, sleep(ms).then(() => false)]);
};

describe('TCP bounds', () => {
  it('closes a connection whose message is not completed within the message timeout, though bytes keep coming', async () => {
    const s = await startStack({ limits: { tcpMessageTimeoutMs: 400, tcpIdleTimeoutMs: 60_000 } });
    s.onRequest('MESSAGE', (_req, ctx) => ctx.reply(200));
    try {
      const c = await rawTcp(s.port);
      const closed = once(c.socket, 'close');
      const started = Date.now();
      // a whole message first: the deadline is per message, counted from the first byte of the next one
      await c.write(rawRequest({ port: s.port, transport: 'TCP', viaPort: 5060 }));
      await c.waitFor((all) => all.includes('200 OK'));
      const head = `MESSAGE sip:34020000002000000001@127.0.0.1:${s.port} SIP/2.0\r\nX-Slow: `;
      let i = 0;
      const trickle = setInterval(() => {
        if (!c.socket.destroyed) c.socket.write(i++ === 0 ? head : 'a');
      }, 40);
      try {
        await closed;
      } finally {
        clearInterval(trickle);
      }
      const took = Date.now() - started;
      assert.ok(took >= 350 && took < 3000, `closed after ${took} ms`);
      assert.equal(s.stats().tcpMessageTimeouts, 1);
    } finally {
      await s.close();
    }
  });

  it('keeps a connection that sends complete messages slower than the message timeout', async () => {
    const s = await startStack({ limits: { tcpMessageTimeoutMs: 300, tcpIdleTimeoutMs: 60_000 } });
    s.onRequest('MESSAGE', (_req, ctx) => ctx.reply(200));
    try {
      const c = await rawTcp(s.port);
      for (let n = 1; n <= 3; n++) {
        const msg = rawRequest({ port: s.port, transport: 'TCP', viaPort: 5060, cseq: n, body: 'x'.repeat(50) });
        await c.write(msg.slice(0, 40)); // each message takes 200 ms: within its own deadline
        await sleep(200);
        await c.write(msg.slice(40));
        await c.waitFor((all) => all.split('200 OK').length - 1 === n);
      }
      assert.equal(await closedWithin(c.socket, 100), false);
      c.close();
    } finally {
      await s.close();
    }
  });

  it('closes a connection sending only unfinished bytes after the idle timeout (bytes do not reset it)', async () => {
    const s = await startStack({ limits: { tcpMessageTimeoutMs: 60_000, tcpIdleTimeoutMs: 300 } });
    try {
      const c = await rawTcp(s.port);
      const trickle = setInterval(() => c.socket.destroyed || c.socket.write(c.received() === '' ? 'MESSAGE sip:a@b SIP/2.0\r\nX: ' : 'a'), 40);
      try {
        assert.equal(await closedWithin(c.socket, 3000), true);
      } finally {
        clearInterval(trickle);
      }
      assert.equal(s.stats().tcpIdleClosed, 1);
    } finally {
      await s.close();
    }
  });

  it('answers a request with oversized headers 513 and closes (default limit: 64 KB)', async () => {
    const s = await startStack();
    try {
      const c = await rawTcp(s.port);
      const closed = once(c.socket, 'close');
      const req = rawRequest({ port: s.port, transport: 'TCP', viaPort: 5060, callId: 'big-head' });
      const [firstLines] = req.split('Content-Length');
      const filler = Array.from({ length: 700 }, (_, i) => `X-Filler-${i}: ${'f'.repeat(100)}\r\n`).join(''); // ~75 KB, never ends
      await c.write(firstLines + filler);
      await closed;
      assert.match(c.received(), /^SIP\/2\.0 513 Message Too Large\r\n/);
      assert.match(c.received(), /Call-ID: big-head\r\n/);
      assert.equal(s.stats().oversize, 1);
    } finally {
      await s.close();
    }
  });

  it('answers a request announcing a body over the limit 513 at once, without waiting for the body', async () => {
    const s = await startStack({ limits: { maxMessageBytes: 4096 } });
    try {
      const c = await rawTcp(s.port);
      const closed = once(c.socket, 'close');
      const req = rawRequest({ port: s.port, transport: 'TCP', viaPort: 5060, callId: 'big-body' }).replace('Content-Length: 0', 'Content-Length: 10000');
      await c.write(req);
      await closed;
      assert.match(c.received(), /^SIP\/2\.0 513 Message Too Large\r\n/);
    } finally {
      await s.close();
    }
  });

  it('refuses connections from one address over the per-address cap; others are unaffected', async () => {
    const s = await startStack({ limits: { maxTcpConnectionsPerIp: 2 } });
    try {
      const a = await rawTcp(s.port);
      const b = await rawTcp(s.port);
      const third = await rawTcp(s.port);
      assert.equal(await closedWithin(third.socket, 2000), true);
      assert.equal(await closedWithin(a.socket, 50), false);
      a.close();
      await sleep(50);
      const again = await rawTcp(s.port); // a freed slot can be used again
      assert.equal(await closedWithin(again.socket, 200), false);
      assert.equal(s.stats().tcpRejected, 1);
      for (const c of [b, again]) c.close();
    } finally {
      await s.close();
    }
  });

  it(`caps connections per address at ${DEFAULT_MAX_TCP_CONNECTIONS_PER_IP} by default`, async () => {
    const s = await startStack();
    const conns: Awaited<ReturnType<typeof rawTcp>>[] = [];
    try {
      for (let i = 0; i < DEFAULT_MAX_TCP_CONNECTIONS_PER_IP + 1; i++) conns.push(await rawTcp(s.port));
      const last = conns.at(-1);
      assert.ok(last !== undefined);
      assert.equal(await closedWithin(last.socket, 2000), true);
      assert.equal(s.stats().tcpRejected, 1);
      assert.equal(s.stats().tcpOpen, DEFAULT_MAX_TCP_CONNECTIONS_PER_IP);
    } finally {
      for (const c of conns) c.close();
      await s.close();
    }
  });
});
