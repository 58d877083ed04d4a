// Content-Length counted in characters (or in the other charset's bytes) on a stream: the framer
// re-measures the body when the bytes after it cannot start a message, or skips the stray tail, so
// the connection's later messages are never lost (RFC 3261 §18.3; miscounted-length.ts). Bodies are
// capture 06's real Catalog answer (UTF-8 announced with its GB2312 length) and that body announced
// with its character count; the GB2312 bytes of 模拟设备 are C4A3 C4E2 C9E8 B1B8 (iconv -t gb2312).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BODY_LENGTH_MISCOUNTED, MISDECLARED_CONTENT_LENGTH, parseSipMessage, serializeSipMessage, SipStreamFramer } from '../src/index.ts';
import { loadAllSamples } from './message-fixtures/samples.ts';

const head = (cseq: number, contentLength: number): Buffer =>
  Buffer.from(
    [
      'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
      `Via: SIP/2.0/TCP 192.168.1.64:5060;branch=z9hG4bKm${cseq}`,
      'From: <sip:34020000001320000001@3402000000>;tag=d1',
      'To: <sip:34020000002000000001@3402000000>',
      `Call-ID: miscount-${cseq}`,
      `CSeq: ${cseq} MESSAGE`,
      'Content-Type: Application/MANSCDP+xml',
      `Content-Length: ${contentLength}`,
      '',
      '',
    ].join('\r\n'),
    'latin1',
  );
const withBody = (cseq: number, body: Buffer, declared = body.length): Buffer => Buffer.concat([head(cseq, declared), body]);
const KEEPALIVE = Buffer.from('<?xml version="1.0" encoding="GB2312"?>\r\n<Notify><CmdType>Keepalive</CmdType><SN>7</SN><DeviceID>34020000001320000001</DeviceID><Status>OK</Status></Notify>\r\n');
const keepalive = (cseq: number): Buffer => withBody(cseq, KEEPALIVE);
const parse = (f: Buffer) => parseSipMessage(f, { trustDatagramEnd: true });
const cseq = (f: Buffer): string => parse(f).headers.get('CSeq') ?? '';
const miscounted = (f: Buffer): boolean => (parse(f) as unknown as Record<symbol, unknown>)[BODY_LENGTH_MISCOUNTED] === true;

const capture06 = loadAllSamples().find((s) => s.file.startsWith('06') && s.index === 0);
assert.ok(capture06);
const body06 = capture06.wire.subarray(capture06.wire.indexOf('\r\n\r\n') + 4);

function pushAll(framer: SipStreamFramer, stream: Buffer, step: number): Buffer[] {
  const frames: Buffer[] = [];
  for (let i = 0; i < stream.length; i += step) frames.push(...framer.push(stream.subarray(i, i + step)));
  return frames;
}

describe('SipStreamFramer and miscounted Content-Length', () => {
  it('capture 06 over TCP (UTF-8 body, Content-Length of its GB2312 bytes): body re-measured, the next message intact', () => {
    assert.deepEqual([capture06.declaredLength, body06.length], [1350, 1369]);
    const stream = Buffer.concat([capture06.wire, keepalive(9)]);
    const declaredEnd = capture06.wire.length - body06.length + 1350;
    // any segmentation but one ending exactly at the declared end (below): the tail is seen with its message
    for (const step of [stream.length, 1460, 7, 100].filter((n) => declaredEnd % n !== 0)) {
      const framer = new SipStreamFramer();
      const frames = pushAll(framer, stream, step);
      assert.deepEqual(frames.map(cseq), ['2 MESSAGE', '9 MESSAGE'], `step ${step}`);
      const catalog = parse(frames[0]!);
      // 1350 = GB2312 bytes of the XML without its final line end, which goes by as a keepalive CRLF
      assert.equal(catalog.body.length, 1368);
      assert.ok(catalog.body.toString('utf8').includes('<Name>模拟设备1-通道3</Name>'));
      assert.ok(catalog.body.toString('latin1').endsWith('</Response>'));
      assert.equal(miscounted(frames[0]!), true);
      assert.equal(miscounted(frames[1]!), false);
      assert.deepEqual([framer.recounted, framer.discardedBytes, framer.bufferedBytes], [1, 0, 0]);
    }
  });

  it('capture 06 byte by byte: complete by its Content-Length before the tail exists; the tail is skipped, the next message intact', () => {
    const framer = new SipStreamFramer();
    const frames = pushAll(framer, Buffer.concat([capture06.wire, keepalive(9)]), 1);
    assert.deepEqual(frames.map(cseq), ['2 MESSAGE', '9 MESSAGE']);
    assert.equal(parse(frames[0]!).body.length, 1350, 'as declared: its cut XML is refused upstream');
    assert.deepEqual([framer.recounted, framer.discardedBytes], [0, 19], 'the 18 bytes past the count and the final LF');
  });

  it('Content-Length in characters, UTF-8 body: re-measured to the bytes', () => {
    const chars = [...body06.toString('utf8')].length;
    assert.ok(chars < body06.length);
    const framer = new SipStreamFramer();
    const frames = framer.push(Buffer.concat([withBody(3, body06, chars), keepalive(4), withBody(5, body06, chars)]));
    assert.deepEqual(frames.map(cseq), ['3 MESSAGE', '4 MESSAGE', '5 MESSAGE']);
    assert.deepEqual(frames.map((f) => parse(f).body.length), [body06.length, KEEPALIVE.length, body06.length]);
    assert.equal(framer.recounted, 2);
  });

  it('Content-Length in characters, GB2312 body with Chinese names', () => {
    const body = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="GB2312"?>\r\n<Response><CmdType>Catalog</CmdType><Item><Name>', 'latin1'),
      Buffer.from('c4a3c4e2c9e8b1b8', 'hex'),
      Buffer.from('1</Name></Item></Response>\r\n', 'latin1'),
    ]);
    const chars = body.length - 4; // four 2-byte characters
    const framer = new SipStreamFramer();
    const frames = framer.push(Buffer.concat([withBody(1, body, chars), keepalive(2)]));
    assert.deepEqual(frames.map(cseq), ['1 MESSAGE', '2 MESSAGE']);
    assert.deepEqual(parse(frames[0]!).body, body);
    assert.equal(framer.recounted, 1);
  });

  it('a tail no count explains: the message goes up as declared, the tail is skipped, the stream goes on', () => {
    const framer = new SipStreamFramer();
    const body = Buffer.from('<a>xyz</a>');
    const frames = framer.push(Buffer.concat([withBody(1, body, 5), keepalive(2)]));
    assert.deepEqual(frames.map(cseq), ['1 MESSAGE', '2 MESSAGE']);
    assert.equal(parse(frames[0]!).body.toString(), '<a>xy');
    assert.deepEqual([framer.recounted, framer.discardedBytes], [0, 5]);
  });

  it('a tail arriving in a later segment than its message is skipped too', () => {
    const framer = new SipStreamFramer();
    const whole = withBody(1, body06, [...body06.toString('utf8')].length);
    const cut = whole.length - (body06.length - [...body06.toString('utf8')].length);
    const first = framer.push(whole.subarray(0, cut));
    assert.equal(first.length, 1, 'complete by its Content-Length, nothing after it yet');
    const rest = framer.push(Buffer.concat([whole.subarray(cut), keepalive(2)]));
    assert.deepEqual(rest.map(cseq), ['2 MESSAGE']);
    assert.equal(framer.discardedBytes, whole.length - cut);
  });

  it('a stray tail with no start line after it is dropped but for a few bytes, until one comes', () => {
    const framer = new SipStreamFramer();
    framer.push(withBody(1, Buffer.from('<a>xyz</a>'), 5));
    assert.deepEqual(framer.push(Buffer.from('</b>'.repeat(100))), []);
    assert.ok(framer.bufferedBytes <= 24);
    assert.deepEqual(framer.push(keepalive(3)).map(cseq), ['3 MESSAGE']);
  });

  it('a simulator’s MISDECLARED_CONTENT_LENGTH goes on the wire as announced, and frames back whole', () => {
    const body = Buffer.from('<Response><Name>门口</Name></Response>');
    const declared = [...body.toString('utf8')].length;
    const msg = parse(withBody(1, body));
    (msg.body as unknown as Record<symbol, number>)[MISDECLARED_CONTENT_LENGTH] = declared;
    const wire = serializeSipMessage(msg);
    assert.ok(wire.toString('latin1').includes(`\r\nContent-Length: ${declared}\r\n`));
    const frames = new SipStreamFramer().push(Buffer.concat([wire, keepalive(2)]));
    assert.deepEqual(frames.map((f) => parse(f).body.toString('utf8')), ['<Response><Name>门口</Name></Response>', KEEPALIVE.toString('utf8')]);
  });

  it('a tail trickled byte by byte is re-read a bounded number of times, then the message goes up as declared', () => {
    const framer = new SipStreamFramer();
    const chars = [...body06.toString('utf8')].length;
    const whole = withBody(1, body06, chars);
    const declaredEnd = whole.length - (body06.length - chars);
    const frames = framer.push(whole.subarray(0, declaredEnd + 1)); // one stray byte: undecided, waits
    assert.equal(frames.length, 0);
    for (let i = declaredEnd + 1; i < declaredEnd + 6; i++) frames.push(...framer.push(whole.subarray(i, i + 1)));
    assert.equal(frames.length, 1, 'given up after a few re-reads');
    assert.equal(parse(frames[0]!).body.length, chars);
    frames.push(...framer.push(Buffer.concat([whole.subarray(declaredEnd + 6), keepalive(2)])));
    assert.deepEqual(frames.map(cseq), ['1 MESSAGE', '2 MESSAGE']);
  });
});
