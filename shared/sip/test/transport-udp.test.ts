// Real sockets on 127.0.0.1, OS-chosen ports: UDP request/response, Via received/rport, malformed input.
import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { SIP_CHANNELS, type ParseErrorEvent } from '../src/transport/diagnostics.ts';
import type { SipStack } from '../src/ua/stack.ts';
import type { Flow } from '../src/transport/flow.ts';
import { rawRequest, rawTcp, rawUdp, startStack } from './support/stack-fixtures.ts';

describe('UDP transport', () => {
  let stack: SipStack;
  const seen: Array<{ via: string; flow: Flow }> = [];
  before(async () => {
    stack = await startStack();
    stack.onRequest('MESSAGE', (req, ctx) => {
      seen.push({ via: req.headers.getLines('Via')[0] ?? '', flow: ctx.flow });
      return ctx.reply(200);
    });
  });
  after(() => stack.close());

  it('binds UDP and TCP on the same OS-chosen port', async () => {
    assert.ok(stack.port > 0);
    const tcp = await rawTcp(stack.port);
    tcp.close();
  });

  it('request/response between two stacks over UDP', async () => {
    const peer = await startStack();
    try {
      const res = await peer.request({ method: 'MESSAGE', uri: `sip:34020000002000000001@127.0.0.1:${stack.port}`, body: '<Query/>' });
      assert.equal(res.status, 200);
      assert.equal(seen.at(-1)?.flow.transport, 'udp');
    } finally {
      await peer.close();
    }
  });

  it('fills received/rport (RFC 3581) and answers to the source port, not the sent-by port', async () => {
    const dev = await rawUdp();
    try {
      // The device claims a private address and another port, as it would behind NAT.
      await dev.send(rawRequest({ port: stack.port, viaHost: '192.168.1.64', viaPort: 5060 }), stack.port);
      const answer = await dev.next();
      assert.match(answer, /^SIP\/2\.0 200 OK\r\n/);
      const via = seen.at(-1)?.via ?? '';
      assert.equal(via, `SIP/2.0/UDP 192.168.1.64:5060;rport=${dev.port};branch=${/branch=([^;\s]+)/.exec(via)?.[1]};received=127.0.0.1`);
      assert.ok(answer.includes(`;rport=${dev.port};`), 'the response carries the stamped Via');
      assert.deepEqual(seen.at(-1)?.flow, { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: dev.port, localAddress: '127.0.0.1', localPort: stack.port });
    } finally {
      dev.close();
    }
  });

  it('without rport the response goes to received + sent-by port (§18.2.2)', async () => {
    const dev = await rawUdp();
    const other = await rawUdp();
    try {
      await dev.send(rawRequest({ port: stack.port, viaHost: '127.0.0.1', viaPort: other.port, rport: false }), stack.port);
      assert.match(await other.next(), /^SIP\/2\.0 200 OK/);
      assert.doesNotMatch(seen.at(-1)?.via ?? '', /received|rport/, 'sent-by equals the source: nothing to add');
    } finally {
      dev.close();
      other.close();
    }
  });

  it('answers a malformed-but-answerable request with 400 and a reason phrase', async () => {
    const dev = await rawUdp();
    try {
      const bad = rawRequest({ port: stack.port, viaPort: dev.port }).replace('Content-Length: 0', 'Content-Length: abc');
      await dev.send(bad, stack.port);
      assert.match(await dev.next(), /^SIP\/2\.0 400 Bad Request - Bad Content-Length\r\n/);
      const mismatch = rawRequest({ port: stack.port, viaPort: dev.port }).replace(/CSeq: 1 MESSAGE/, 'CSeq: 1 INFO');
      await dev.send(mismatch, stack.port);
      assert.match(await dev.next(), /^SIP\/2\.0 400 Bad Request - Malformed CSeq\r\n/);
      await dev.send(rawRequest({ port: stack.port, viaPort: dev.port }).replace('SIP/2.0\r\n', 'SIP/3.0\r\n'), stack.port);
      assert.match(await dev.next(), /^SIP\/2\.0 505 Version Not Supported\r\n/);
    } finally {
      dev.close();
    }
  });

  it('drops garbage and unanswerable messages, counts them, publishes parse_error, keeps serving', async () => {
    const events: ParseErrorEvent[] = [];
    const onEvent = (m: unknown): void => {
      events.push(m as ParseErrorEvent);
    };
    diagnosticsChannel.subscribe(SIP_CHANNELS.parseError, onEvent);
    const dev = await rawUdp();
    try {
      const before = stack.stats();
      await dev.send(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x42]), stack.port);
      await dev.send('HELLO WORLD\r\n\r\n', stack.port);
      await dev.send(rawRequest({ port: stack.port, viaPort: dev.port }).replace(/Call-ID: .*\r\n/, ''), stack.port); // no Call-ID: cannot answer
      await dev.send(rawRequest({ method: 'ACK', port: stack.port, viaPort: dev.port }).replace('Content-Length: 0', 'Content-Length: x'), stack.port); // never answer ACK
      await dev.send('SIP/2.0 200 OK\r\nVia: garbage\r\n\r\n', stack.port);
      await dev.send(rawRequest({ port: stack.port, viaPort: dev.port }), stack.port);
      assert.match(await dev.next(), /^SIP\/2\.0 200 OK/, 'only the valid request is answered');
      const after = stack.stats();
      assert.equal(after.parseErrors - before.parseErrors, 5);
      assert.equal(after.dropped - before.dropped, 5);
      assert.equal(after.badRequestsSent, before.badRequestsSent);
      assert.equal(events.length, 5);
      assert.ok(events.every((e) => !e.answered && e.flow.remotePort === dev.port));
      await assert.rejects(dev.next(200), /no datagram/);
    } finally {
      diagnosticsChannel.unsubscribe(SIP_CHANNELS.parseError, onEvent);
      dev.close();
    }
  });

  it('drops datagrams over the size limit', async () => {
    const small = await startStack({ limits: { maxMessageBytes: 1000 } });
    const dev = await rawUdp();
    try {
      await dev.send(rawRequest({ port: small.port, viaPort: dev.port, body: 'x'.repeat(2000) }), small.port);
      await dev.send(rawRequest({ port: small.port, viaPort: dev.port, method: 'OPTIONS' }), small.port);
      assert.match(await dev.next(), /^SIP\/2\.0 200 OK/);
      assert.equal(small.stats().oversize, 1);
    } finally {
      dev.close();
      await small.close();
    }
  });
});
