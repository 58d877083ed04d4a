// SipStreamFramer: RFC 3261 §18.3 stream framing and RFC 5626 §3.5.1 CRLF keepalives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSipMessage, SipParseError, SipStreamFramer, type StreamKeepalive } from '../src/index.ts';

const msg = (cseq: number, body = ''): Buffer =>
  Buffer.from(
    [
      'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
      'Via: SIP/2.0/TCP 192.168.1.64:5060;branch=z9hG4bKt' + cseq,
      'From: <sip:34020000001320000001@3402000000>;tag=d1',
      'To: <sip:34020000002000000001@3402000000>',
      'Call-ID: tcp-' + cseq,
      `CSeq: ${cseq} MESSAGE`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n'),
  );
const cseqs = (frames: Buffer[]): string[] => frames.map((f) => parseSipMessage(f).headers.get('CSeq') ?? '');

describe('SipStreamFramer', () => {
  it('returns several messages from one segment, bodies sized by Content-Length', () => {
    const framer = new SipStreamFramer();
    const frames = framer.push(Buffer.concat([msg(1, '<a/>'), msg(2), msg(3, 'x\r\n\r\ny')]));
    assert.deepEqual(cseqs(frames), ['1 MESSAGE', '2 MESSAGE', '3 MESSAGE']);
    assert.equal(parseSipMessage(frames[2]!).body.toString(), 'x\r\n\r\ny');
    assert.equal(framer.bufferedBytes, 0);
  });

  it('reassembles a message delivered one byte at a time', () => {
    const framer = new SipStreamFramer();
    const whole = Buffer.concat([msg(1, 'hello body'), msg(2, 'second')]);
    const frames: Buffer[] = [];
    for (let i = 0; i < whole.length; i++) frames.push(...framer.push(whole.subarray(i, i + 1)));
    assert.deepEqual(cseqs(frames), ['1 MESSAGE', '2 MESSAGE']);
    assert.deepEqual(Buffer.concat(frames), whole);
  });

  it('splits at every possible boundary the same way', () => {
    const whole = Buffer.concat([msg(1, 'abc'), msg(2, 'defg')]);
    for (let cut = 1; cut < whole.length; cut++) {
      const framer = new SipStreamFramer();
      const frames = [...framer.push(whole.subarray(0, cut)), ...framer.push(whole.subarray(cut))];
      assert.deepEqual(cseqs(frames), ['1 MESSAGE', '2 MESSAGE'], `cut at ${cut}`);
    }
  });

  it('skips CRLF keepalives between messages and reports ping / pong', () => {
    const seen: StreamKeepalive[] = [];
    const framer = new SipStreamFramer({ onKeepalive: (k) => seen.push(k) });
    assert.deepEqual(framer.push(Buffer.from('\r\n\r\n')), []);
    const frames = framer.push(Buffer.concat([msg(1), Buffer.from('\r\n'), msg(2)]));
    assert.deepEqual(cseqs(frames), ['1 MESSAGE', '2 MESSAGE']);
    assert.deepEqual(seen, ['ping', 'pong']);
  });

  it('a message without Content-Length is a framing error, and the framer stays failed', () => {
    const framer = new SipStreamFramer();
    const noLength = Buffer.from('MESSAGE sip:a@b SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\nCall-ID: x\r\n\r\nbody');
    const isNoLength = (err: unknown): boolean => err instanceof SipParseError && err.code === 'SIP_ERR_CONTENT_LENGTH';
    assert.throws(() => framer.push(noLength), isNoLength);
    assert.throws(() => framer.push(msg(1)), isNoLength);
  });

  it('rejects bad Content-Length values before waiting for a body', () => {
    for (const value of ['-1', 'ten', '99999999999']) {
      const framer = new SipStreamFramer();
      const head = Buffer.from(`MESSAGE sip:a@b SIP/2.0\r\nl : ${value}\r\n\r\n`);
      assert.throws(() => framer.push(head), (err: unknown) => err instanceof SipParseError && err.code === 'SIP_ERR_CONTENT_LENGTH');
    }
  });

  it('enforces the size limit on announced bodies and on endless header sections', () => {
    const tooLarge = (err: unknown): boolean => err instanceof SipParseError && err.code === 'SIP_ERR_MESSAGE_TOO_LARGE';
    assert.throws(() => new SipStreamFramer({ maxMessageBytes: 1000 }).push(msg(1, 'x'.repeat(1000))), tooLarge);
    const framer = new SipStreamFramer({ maxMessageBytes: 1000 });
    assert.deepEqual(framer.push(Buffer.from('MESSAGE sip:a@b SIP/2.0\r\n')), []);
    assert.throws(() => {
      for (let i = 0; i < 100; i++) framer.push(Buffer.from(`X-Filler-${i}: ${'y'.repeat(20)}\r\n`));
    }, tooLarge);
    assert.equal(new SipStreamFramer({ maxMessageBytes: 1000 }).push(msg(1, 'x'.repeat(500))).length, 1);
  });

  it('accepts LF-only peers and the compact Content-Length form', () => {
    const lf = Buffer.from('MESSAGE sip:a@b SIP/2.0\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\nl: 3\n\nabcMESSAGE');
    const framer = new SipStreamFramer();
    const frames = framer.push(lf);
    assert.equal(frames.length, 1);
    assert.ok(frames[0]!.toString().endsWith('\n\nabc'));
    assert.equal(framer.bufferedBytes, 'MESSAGE'.length);
  });

  it('a peer trickling one byte per segment costs linear time', () => {
    const big = msg(1, 'b'.repeat(50_000));
    const padded = Buffer.from(big.toString('latin1').replace('\r\nCSeq', `\r\nX-Pad: ${'a'.repeat(100_000)}\r\nCSeq`), 'latin1');
    const framer = new SipStreamFramer({ maxMessageBytes: 256 * 1024 });
    const t0 = process.cpuUsage();
    const frames: Buffer[] = [];
    for (let i = 0; i < padded.length; i++) frames.push(...framer.push(padded.subarray(i, i + 1)));
    const t = process.cpuUsage(t0);
    assert.equal(frames.length, 1);
    assert.deepEqual(frames[0], padded);
    assert.ok(t.user + t.system < 2_000_000, `${padded.length} one-byte pushes took ${(t.user + t.system) / 1000} ms`);
  });
});
