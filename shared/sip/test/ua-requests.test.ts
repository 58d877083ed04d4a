// UA API over real sockets: handlers, default answers, typed errors, 100 Trying, close().
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SipRejectedError, SipStackError, SipTimeoutError, SipTransportError } from '../src/errors.ts';
import type { SipStack } from '../src/ua/stack.ts';
import { rawRequest, rawUdp, startStack } from './support/stack-fixtures.ts';

describe('UA requests', () => {
  let server: SipStack;
  let client: SipStack;
  let uri: string;
  before(async () => {
    server = await startStack({ userAgent: 'vms-test' });
    client = await startStack();
    uri = `sip:34020000002000000001@127.0.0.1:${server.port}`;
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('passes body bytes through verbatim and lets the handler set headers', async () => {
    const gb2312 = Buffer.from([0xc9, 0xe3, 0xcf, 0xf1, 0xbb, 0xfa]); // 摄像机 in GB2312
    server.onRequest('MESSAGE', (req, ctx) => {
      assert.deepEqual(req.body, gb2312);
      return ctx.reply(200, { headers: { 'X-Seen': String(req.body.length) } });
    });
    const res = await client.request({ method: 'MESSAGE', uri, body: gb2312, contentType: 'Application/MANSCDP+xml' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('X-Seen'), '6');
    assert.equal(res.headers.get('Server'), 'vms-test');
    assert.match(res.headers.get('To') ?? '', /;tag=[0-9a-f]{16}$/);
  });

  it('answers unhandled methods: OPTIONS 200 with Allow, known 405 with Allow, unknown 501', async () => {
    const opt = await client.request({ method: 'OPTIONS', uri });
    assert.equal(opt.status, 200);
    assert.match(opt.headers.get('Allow') ?? '', /MESSAGE/);
    const pub = await client.request({ method: 'PUBLISH', uri });
    assert.equal(pub.status, 405);
    assert.ok(pub.headers.has('Allow'));
    assert.equal((await client.request({ method: 'FROB', uri })).status, 501);
  });

  it('answers 500 when a handler throws or settles without a final response', async () => {
    server.onRequest('INFO', () => {
      throw new Error('boom');
    });
    server.onRequest('UPDATE', async () => {});
    assert.equal((await client.request({ method: 'INFO', uri })).status, 500);
    assert.equal((await client.request({ method: 'UPDATE', uri })).status, 500);
  });

  it('rejects an out-of-dialog request with a To-tag and no handler with 481 (§12.2.2)', async () => {
    const res = await client.request({ method: 'BYE', uri, headers: { To: `<${uri}>;tag=nosuch` } });
    assert.equal(res.status, 481);
  });

  it('reports provisional responses and sends 100 Trying for a slow INVITE (§17.2.1)', async () => {
    server.onRequest('INVITE', async (_req, ctx) => {
      await new Promise((r) => setTimeout(r, 300));
      ctx.reply(486);
    });
    const provisional: number[] = [];
    const err = await client.createUAC({ uri }, { onProvisional: (r) => provisional.push(r.status) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.deepEqual(provisional, [100]);
    assert.ok(err instanceof SipRejectedError);
    assert.equal(err.response.status, 486);
    await assert.rejects(client.request({ method: 'INVITE', uri }), (e: unknown) => e instanceof SipStackError && e.code === 'SIP_ERR_BAD_ARGUMENT');
  });

  it('rejects with SipTimeoutError (408, SIP_ERR_TIMEOUT) when nobody answers (Timer F)', async () => {
    const fast = await startStack({ timers: { T1: 10, T2: 40 } });
    const silent = await rawUdp();
    try {
      const started = Date.now();
      const err = await fast.request({ method: 'MESSAGE', uri: `sip:x@127.0.0.1:${silent.port}` }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof SipTimeoutError);
      assert.equal(err.code, 'SIP_ERR_TIMEOUT');
      assert.equal(err.sipStatus, 408);
      assert.ok(Date.now() - started >= 640 - 20, 'Timer F = 64*T1');
    } finally {
      silent.close();
      await fast.close();
    }
  });

  it('rejects with SipTransportError when the TCP peer refuses', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const err = await client.request({ method: 'MESSAGE', uri: `sip:x@127.0.0.1:${port};transport=tcp` }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof SipTransportError);
    assert.equal(err.sipStatus, 503);
  });

  it('refuses bad arguments with SIP_ERR_BAD_ARGUMENT', async () => {
    await assert.rejects(client.request({ method: 'MESSAGE', uri: 'not a uri' }), (e: unknown) => e instanceof SipStackError && e.code === 'SIP_ERR_BAD_ARGUMENT');
    const udpOnly = await startStack({ transports: ['udp'] });
    try {
      await assert.rejects(udpOnly.request({ method: 'MESSAGE', uri: 'sip:x@127.0.0.1:5;transport=tcp' }), (e: unknown) => e instanceof SipStackError && e.code === 'SIP_ERR_BAD_ARGUMENT');
    } finally {
      await udpOnly.close();
    }
    assert.throws(() => server.onRequest('MESSAGE', () => {}), (e: unknown) => e instanceof SipStackError);
  });

  it('absorbs a retransmitted request: the handler runs once, the response is resent (§17.2.2)', async () => {
    let calls = 0;
    server.onRequest('NOTIFY', (_req, ctx) => {
      calls++;
      return ctx.reply(200);
    });
    const dev = await rawUdp();
    try {
      const msg = rawRequest({ method: 'NOTIFY', port: server.port, viaPort: dev.port, branch: 'z9hG4bKretrans1' });
      await dev.send(msg, server.port);
      const first = await dev.next();
      await dev.send(msg, server.port);
      const second = await dev.next();
      assert.equal(calls, 1);
      assert.equal(second, first, 'byte-identical response, same To-tag');
    } finally {
      dev.close();
    }
  });

  it('close() is idempotent and rejects later requests with SIP_ERR_STACK_CLOSED', async () => {
    const s = await startStack();
    await Promise.all([s.close(), s.close()]);
    await s.close();
    await assert.rejects(s.request({ method: 'MESSAGE', uri }), (e: unknown) => e instanceof SipStackError && e.code === 'SIP_ERR_STACK_CLOSED');
    const st = s.stats();
    assert.equal(st.pendingRequests + st.clientTransactions + st.serverTransactions, 0);
  });

  it('with a public host and no public port, it announces that host and the bound port in Via and Contact', async () => {
    // (a wildcard bind is the usual reason; tests listen on loopback only)
    const wild = await startStack({ publicAddress: { host: '192.0.2.77' } });
    const peer = await startStack();
    try {
      let seenVia = '';
      wild.onRequest('MESSAGE', (_req, ctx) => ctx.reply(200));
      peer.onRequest('MESSAGE', (req, ctx) => {
        seenVia = req.headers.get('Via') ?? '';
        return ctx.reply(200);
      });
      // reached on the address it listens on although it announces another one
      assert.equal((await peer.request({ method: 'MESSAGE', uri: `sip:34020000002000000001@127.0.0.1:${wild.port}` })).status, 200);
      assert.equal(wild.host, '192.0.2.77');
      assert.equal(wild.contact('34020000002000000001'), `<sip:34020000002000000001@192.0.2.77:${wild.port}>`);
      const res = await wild.request({ method: 'MESSAGE', uri: `sip:34020000001320000001@127.0.0.1:${peer.port}` });
      assert.equal(res.status, 200);
      assert.ok(seenVia.startsWith(`SIP/2.0/UDP 192.0.2.77:${wild.port};`), seenVia);
    } finally {
      await Promise.all([wild.close(), peer.close()]);
    }
  });

  it('counts traffic in stats()', () => {
    const st = server.stats();
    assert.ok(st.messagesIn > 0 && st.messagesOut > 0);
    assert.equal(st.parseErrors, 0);
  });
});
