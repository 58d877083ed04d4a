// Real TCP on 127.0.0.1: framing over split/coalesced segments, RFC 5626 keepalive, limits, flows.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Flow } from '../src/transport/flow.ts';
import type { SipStack } from '../src/ua/stack.ts';
import { rawRequest, rawTcp, rawUdp, startStack } from './support/stack-fixtures.ts';

const countOk = (s: string): number => s.split('SIP/2.0 200 OK\r\n').length - 1;

describe('TCP transport', () => {
  let stack: SipStack;
  let lastFlow: Flow | undefined;
  before(async () => {
    stack = await startStack();
    stack.onRequest('MESSAGE', (_req, ctx) => ctx.reply(200));
    stack.onRequest('REGISTER', (_req, ctx) => {
      lastFlow = ctx.flow;
      return ctx.reply(200);
    });
  });
  after(() => stack.close());

  it('request/response between two stacks over TCP', async () => {
    const peer = await startStack();
    try {
      const res = await peer.request({ method: 'MESSAGE', uri: `sip:34020000002000000001@127.0.0.1:${stack.port};transport=tcp`, body: '<Query/>' });
      assert.equal(res.status, 200);
    } finally {
      await peer.close();
    }
  });

  it('reassembles a message split across segments, headers and body cut mid-way', async () => {
    const c = await rawTcp(stack.port);
    try {
      const msg = Buffer.from(rawRequest({ port: stack.port, transport: 'TCP', viaPort: 5060, body: '<?xml version="1.0"?><Notify/>' }));
      for (const cut of [[0, 17], [17, 120], [120, msg.length - 5], [msg.length - 5, msg.length]] as const) {
        await c.write(msg.subarray(cut[0], cut[1]));
        await sleep(15);
      }
      await c.waitFor((s) => countOk(s) === 1);
    } finally {
      c.close();
    }
  });

  it('splits several messages coalesced in one segment, answers each on the same connection', async () => {
    const c = await rawTcp(stack.port);
    try {
      const three = [1, 2, 3].map((n) => rawRequest({ port: stack.port, transport: 'TCP', viaPort: 5060, cseq: n, body: `b${n}` })).join('');
      await c.write(three);
      const all = await c.waitFor((s) => countOk(s) === 3);
      assert.deepEqual([...all.matchAll(/CSeq: (\d) MESSAGE/g)].map((m) => m[1]), ['1', '2', '3']);
    } finally {
      c.close();
    }
  });

  it('answers a CRLFCRLF keepalive ping with a CRLF pong (RFC 5626 §3.5.1)', async () => {
    const c = await rawTcp(stack.port);
    try {
      const before = stack.stats().keepalivesAnswered;
      await c.write('\r\n\r\n');
      assert.equal(await c.waitFor((s) => s === '\r\n'), '\r\n');
      assert.equal(stack.stats().keepalivesAnswered, before + 1);
      await c.write(rawRequest({ port: stack.port, transport: 'TCP', viaPort: 5060 }));
      await c.waitFor((s) => countOk(s) === 1);
    } finally {
      c.close();
    }
  });

  it('closes a connection whose stream cannot be framed (no Content-Length), counts it', async () => {
    const c = await rawTcp(stack.port);
    const before = stack.stats();
    await c.write(rawRequest({ port: stack.port, transport: 'TCP', viaPort: 5060 }).replace('Content-Length: 0\r\n', ''));
    await new Promise((resolve) => c.socket.once('close', resolve));
    const after = stack.stats();
    assert.equal(after.dropped - before.dropped, 1);
    assert.equal(after.parseErrors - before.parseErrors, 1);
  });

  it('answers a malformed request on TCP with 400 without dropping the connection', async () => {
    const c = await rawTcp(stack.port);
    try {
      await c.write(rawRequest({ port: stack.port, transport: 'TCP', viaPort: 5060 }).replace(/^MESSAGE sip:\S+/, 'MESSAGE sip:bad uri'));
      await c.write(rawRequest({ port: stack.port, transport: 'TCP', viaPort: 5060 }));
      const all = await c.waitFor((s) => countOk(s) === 1 && s.includes('400'));
      assert.match(all, /^SIP\/2\.0 400 Bad Request - /);
    } finally {
      c.close();
    }
  });

  it('closes idle connections and refuses connections over the limit', async () => {
    const s = await startStack({ limits: { tcpIdleTimeoutMs: 150, maxTcpConnections: 1 } });
    try {
      const first = await rawTcp(s.port);
      const closed = new Promise((resolve) => first.socket.once('close', resolve));
      const second = await rawTcp(s.port);
      await new Promise((resolve) => second.socket.once('close', resolve));
      await closed;
      const st = s.stats();
      assert.equal(st.tcpRejected, 1);
      assert.equal(st.tcpIdleClosed, 1);
      assert.equal(st.tcpOpen, 0);
    } finally {
      await s.close();
    }
  });

  it('sends a request to a device over the TCP connection it registered on (NAT flow)', async () => {
    const dev = await rawTcp(stack.port);
    try {
      await dev.write(rawRequest({ method: 'REGISTER', port: stack.port, transport: 'TCP', viaHost: '192.168.1.64', viaPort: 5060 }));
      await dev.waitFor((s) => countOk(s) === 1);
      assert.equal(lastFlow?.transport, 'tcp');
      assert.equal(lastFlow?.remotePort, dev.socket.localPort);
      // The Request-URI (device contact) is unreachable; only the remembered connection works.
      const pending = stack.request({ method: 'MESSAGE', uri: 'sip:34020000001320000001@192.168.1.64:5060', target: lastFlow, body: '<Query/>' });
      const got = await dev.waitFor((s) => s.includes('MESSAGE sip:34020000001320000001@192.168.1.64:5060 SIP/2.0'));
      const req = got.slice(got.indexOf('MESSAGE sip:'));
      const via = /Via: (.*)\r\n/.exec(req)?.[1] ?? '';
      assert.match(via, new RegExp(`^SIP/2\\.0/TCP 127\\.0\\.0\\.1:${stack.port};rport;branch=z9hG4bK`));
      const answer = req
        .split('\r\n\r\n')[0]!
        .replace(/^MESSAGE .*\r\n/, 'SIP/2.0 200 OK\r\n')
        .replace(/To: (.*)\r\n/, 'To: $1;tag=dev\r\n')
        .replace(/Content-Length: \d+/, 'Content-Length: 0')
        .replace(/Content-Type: .*\r\n/, '');
      await dev.write(`${answer}\r\n\r\n`);
      assert.equal((await pending).status, 200);
    } finally {
      dev.close();
    }
  });

  it('sends to a UDP flow from the stack socket; close() rejects what is pending', async () => {
    const own = await startStack();
    let flow: Flow | undefined;
    own.onRequest('REGISTER', (_req, ctx) => {
      flow = ctx.flow;
      return ctx.reply(200);
    });
    const dev = await rawUdp();
    try {
      await dev.send(rawRequest({ method: 'REGISTER', port: own.port, viaHost: '192.168.1.64', viaPort: 5060 }), own.port);
      await dev.next();
      assert.equal(flow?.remotePort, dev.port);
      const pending = own.request({ method: 'MESSAGE', uri: 'sip:34020000001320000001@192.168.1.64:5060', target: flow }).catch((e: unknown) => e);
      assert.match(await dev.next(), /^MESSAGE sip:34020000001320000001@192\.168\.1\.64:5060 SIP\/2\.0\r\n/);
      await own.close();
      assert.equal(((await pending) as { code?: string }).code, 'SIP_ERR_STACK_CLOSED');
    } finally {
      dev.close();
      await own.close();
    }
  });

  it('falls back to the Request-URI when the remembered TCP connection is gone', async () => {
    const device = await startStack();
    try {
      device.onRequest('MESSAGE', (_req, ctx) => ctx.reply(200));
      const goneFlow: Flow = { transport: 'tcp', remoteAddress: '127.0.0.1', remotePort: 1, localAddress: '127.0.0.1', localPort: stack.port, connectionId: 999_999 };
      const res = await stack.request({ method: 'MESSAGE', uri: `sip:34020000001320000001@127.0.0.1:${device.port}`, target: goneFlow });
      assert.equal(res.status, 200);
    } finally {
      await device.close();
    }
  });
});
