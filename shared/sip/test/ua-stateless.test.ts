// Stateless UAS (RFC 3261 §8.2.7) over real sockets: answered without a transaction, the same To-tag
// for a retransmission, undefined / a throw falls through to the ordinary handler, TCP and requests the
// datagram shortcut declines take the parsed path and stay stateless.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { SIP_CHANNELS, type DatagramAnswerEvent, type MessageInEvent } from '../src/index.ts';
import { SipStackError } from '../src/errors.ts';
import type { StatelessRequest } from '../src/ua/types.ts';
import { rawRequest, rawTcp, rawUdp, startStack } from './support/stack-fixtures.ts';

const KEEPALIVE = '<Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>34020000001320000001</DeviceID></Notify>';
const toTag = (response: string): string | undefined => /^To: .*;tag=([0-9a-f]+)\r$/m.exec(response)?.[1];

describe('stateless requests', () => {
  it('answers from the datagram without keeping a transaction; a retransmission gets the same To-tag', async () => {
    const stack = await startStack({ userAgent: 'vms-test', forceRport: true });
    const peer = await rawUdp();
    // the shortcut publishes neither message_in nor message_out: metrics count its answers from datagram_answer
    const answered: DatagramAnswerEvent[] = [];
    const parsed: MessageInEvent[] = [];
    const onAnswer = (e: unknown): void => void answered.push(e as DatagramAnswerEvent);
    const onIn = (e: unknown): void => void parsed.push(e as MessageInEvent);
    subscribe(SIP_CHANNELS.datagramAnswer, onAnswer);
    subscribe(SIP_CHANNELS.messageIn, onIn);
    try {
      const seen: StatelessRequest[] = [];
      stack.onStatelessRequest('MESSAGE', (req) => {
        seen.push(req);
        return req.body.includes('Keepalive') ? 200 : undefined;
      });
      const request = rawRequest({ port: stack.port, viaPort: peer.port, branch: 'z9hG4bKka1', callId: 'ka-1', body: KEEPALIVE });
      await peer.send(request, stack.port);
      const first = await peer.next();
      await peer.send(request, stack.port); // retransmission
      const second = await peer.next();
      assert.match(first, /^SIP\/2\.0 200 OK\r\n/);
      assert.match(first, /\r\nVia: SIP\/2\.0\/UDP 127\.0\.0\.1:\d+;rport=\d+;branch=z9hG4bKka1;received=127\.0\.0\.1\r\n/);
      assert.match(first, /\r\nServer: vms-test\r\n/);
      assert.match(first, /\r\nContent-Length: 0\r\n\r\n$/);
      assert.match(toTag(first) ?? '', /^[0-9a-f]{16}$/);
      assert.equal(toTag(second), toTag(first), '§8.2.7: the same tag for the same request');
      assert.equal(seen.length, 2, 'a retransmission is simply handled again');
      assert.deepEqual([seen[0]?.method, seen[0]?.callId, seen[0]?.from], ['MESSAGE', 'ka-1', '<sip:34020000001320000001@3402000000>;tag=dev1']);
      assert.equal(seen[0]?.body.toString('latin1'), KEEPALIVE);
      const stats = stack.stats();
      assert.equal(stats.serverTransactions, 0);
      assert.equal(stats.messagesIn, 2);
      assert.deepEqual(answered, [{ method: 'MESSAGE', status: 200 }, { method: 'MESSAGE', status: 200 }]);
      assert.equal(parsed.length, 0);
      // Another request, another tag.
      await peer.send(rawRequest({ port: stack.port, viaPort: peer.port, branch: 'z9hG4bKka2', callId: 'ka-2', body: KEEPALIVE }), stack.port);
      assert.notEqual(toTag(await peer.next()), toTag(first));
    } finally {
      unsubscribe(SIP_CHANNELS.datagramAnswer, onAnswer);
      unsubscribe(SIP_CHANNELS.messageIn, onIn);
      peer.close();
      await stack.close();
    }
  });

  it('undefined or a throwing handler passes the request to the ordinary handler', async () => {
    const stack = await startStack();
    const peer = await rawUdp();
    try {
      let runs = 0;
      stack.onStatelessRequest('MESSAGE', (req) => {
        runs++;
        if (req.body.includes('boom')) throw new Error('stateless bug');
        return undefined;
      });
      stack.onRequest('MESSAGE', (_req, ctx) => ctx.reply(202));
      await peer.send(rawRequest({ port: stack.port, viaPort: peer.port, body: '<Query/>' }), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 202 Accepted\r\n/);
      await peer.send(rawRequest({ port: stack.port, viaPort: peer.port, body: 'boom' }), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 202 Accepted\r\n/);
      assert.equal(stack.stats().serverTransactions, 2);
      // declined (or thrown) on the datagram shortcut: the parsed request does not run the handler again (issue 11)
      assert.equal(runs, 2, 'one run per datagram');
    } finally {
      peer.close();
      await stack.close();
    }
  });

  it('TCP and datagrams the shortcut declines are parsed first, and still answered statelessly', async () => {
    const stack = await startStack();
    const peer = await rawUdp();
    const tcp = await rawTcp(stack.port);
    try {
      let calls = 0;
      const texts: string[] = [];
      stack.onStatelessRequest('MESSAGE', (req) => {
        calls++;
        texts.push(req.body.toString('latin1'));
        return 200;
      });
      // A folded header line: only the parser may read it.
      const folded = rawRequest({ port: stack.port, viaPort: peer.port, body: KEEPALIVE, extra: ['Subject: a,', ' b'] });
      await peer.send(folded, stack.port);
      const res = await peer.next();
      assert.match(res, /^SIP\/2\.0 200 OK\r\n/);
      assert.match(toTag(res) ?? '', /^[0-9a-f]{16}$/);
      await tcp.write(rawRequest({ port: stack.port, transport: 'TCP', viaPort: tcp.socket.localPort ?? 0, body: KEEPALIVE }));
      await tcp.waitFor((all) => /SIP\/2\.0 200 OK/.test(all));
      assert.equal(calls, 2);
      assert.deepEqual(texts, [KEEPALIVE, KEEPALIVE], 'the same body on both paths');
      assert.equal(stack.stats().serverTransactions, 0);
    } finally {
      tcp.close();
      peer.close();
      await stack.close();
    }
  });

  it('an answer with headers (503 + Retry-After) carries them on the shortcut and on the parsed path; hasHeader and header see the request', async () => {
    const stack = await startStack({ userAgent: 'vms-test' });
    const peer = await rawUdp();
    const tcp = await rawTcp(stack.port);
    try {
      const seen: boolean[] = [];
      const values: (string | undefined)[] = [];
      stack.onStatelessRequest('REGISTER', (req) => {
        const authorized = req.hasHeader('authorization');
        seen.push(authorized, req.hasHeader('Max-Forwards'), req.hasHeader('Expires'));
        values.push(req.header('max-forwards'), req.header('Expires'), req.header('Authorization'), req.header('Max'));
        return authorized ? undefined : { status: 503, headers: [['Retry-After', '17']] };
      });
      stack.onRequest('REGISTER', (_req, ctx) => ctx.reply(200));
      const register = (extra: string[], transport: 'UDP' | 'TCP' = 'UDP', viaPort = peer.port): string =>
        rawRequest({ method: 'REGISTER', port: stack.port, transport, viaPort, extra });
      await peer.send(register([]), stack.port);
      const shed = await peer.next();
      assert.match(shed, /^SIP\/2\.0 503 Service Unavailable\r\n/);
      assert.match(shed, /\r\nCSeq: 1 REGISTER\r\nRetry-After: 17\r\nServer: vms-test\r\nContent-Length: 0\r\n\r\n$/);
      assert.match(toTag(shed) ?? '', /^[0-9a-f]{16}$/);
      await peer.send(register(['Authorization : Digest username="x"']), stack.port); // LWS before the colon
      assert.match(await peer.next(), /^SIP\/2\.0 200 OK\r\n/, 'undefined: the ordinary handler');
      // the parsed path (a folded line, then TCP): the same answer, the same view
      await peer.send(register(['Subject: a,', ' b']), stack.port);
      const parsed = await peer.next();
      assert.match(parsed, /^SIP\/2\.0 503 Service Unavailable\r\n/);
      assert.match(parsed, /\r\nRetry-After: 17\r\n/);
      await tcp.write(register([], 'TCP', tcp.socket.localPort ?? 0));
      await tcp.waitFor((all) => /SIP\/2\.0 503 Service Unavailable\r\n[^]*Retry-After: 17\r\n/.test(all));
      assert.deepEqual(seen.slice(0, 6), [false, true, false, true, true, false]);
      // values trimmed of LWS, the first line of a name, absent as undefined; the same on both paths
      await peer.send(register(['EXPIRES :  3600 ', 'Expires: 7']), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 503 /);
      await peer.send(register(['Expires:\t3600', 'Subject: a,', ' b']), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 503 /);
      assert.deepEqual(values.slice(4, 8), ['70', undefined, 'Digest username="x"', undefined]);
      assert.deepEqual(values.slice(-8), ['70', '3600', undefined, undefined, '70', '3600', undefined, undefined]);
    } finally {
      tcp.close();
      peer.close();
      await stack.close();
    }
  });

  it('never answers in-dialog requests statelessly, and refuses INVITE, ACK and CANCEL handlers', async () => {
    const stack = await startStack();
    const peer = await rawUdp();
    try {
      let calls = 0;
      stack.onStatelessRequest('MESSAGE', () => {
        calls++;
        return 200;
      });
      await peer.send(rawRequest({ port: stack.port, viaPort: peer.port, extra: [] }).replace('To: <sip:34020000002000000001@3402000000>', 'To: <sip:34020000002000000001@3402000000>;tag=x1'), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 481 /);
      assert.equal(calls, 0);
      for (const method of ['INVITE', 'ACK', 'CANCEL']) {
        assert.throws(() => stack.onStatelessRequest(method, () => 200), (e) => e instanceof SipStackError && e.code === 'SIP_ERR_BAD_ARGUMENT');
      }
      assert.throws(() => stack.onStatelessRequest('MESSAGE', () => 200), SipStackError, 'one per method');
    } finally {
      peer.close();
      await stack.close();
    }
  });

  it('StatelessOptions.ordinary: a datagram its test passes goes to the ordinary handler unpeeked, the stateless one not run', async () => {
    const stack = await startStack();
    const peer = await rawUdp();
    try {
      let statelessRuns = 0;
      let ordinaryRuns = 0;
      const tested: string[] = [];
      stack.onStatelessRequest(
        'MESSAGE',
        () => {
          statelessRuns++;
          return 200;
        },
        { ordinary: (data) => (tested.push(data.toString('latin1', 0, 8)), data.includes('X-Ordinary: yes')) },
      );
      stack.onRequest('MESSAGE', (_req, ctx) => {
        ordinaryRuns++;
        ctx.reply(202);
      });
      stack.onRequest('OPTIONS', (_req, ctx) => ctx.reply(200));
      await peer.send(rawRequest({ port: stack.port, viaPort: peer.port, body: KEEPALIVE, extra: ['X-Ordinary: yes'] }), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 202 Accepted\r\n/);
      assert.deepEqual([statelessRuns, ordinaryRuns], [0, 1], 'neither on the shortcut nor on the parsed path');
      await peer.send(rawRequest({ port: stack.port, viaPort: peer.port, body: KEEPALIVE }), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 200 OK\r\n/);
      assert.deepEqual([statelessRuns, ordinaryRuns], [1, 1], 'the test says no: answered statelessly');
      await peer.send(rawRequest({ method: 'OPTIONS', port: stack.port, viaPort: peer.port, extra: ['X-Ordinary: yes'] }), stack.port);
      assert.match(await peer.next(), /^SIP\/2\.0 200 OK\r\n/);
      assert.deepEqual(tested, ['MESSAGE ', 'MESSAGE '], "only the method's requests are tested");
    } finally {
      peer.close();
      await stack.close();
    }
  });
});
