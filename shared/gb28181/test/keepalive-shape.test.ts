// A device's keepalive shape against scanKeepalive: a body matches the shape only when scanKeepalive
// reads it with the shape's charset and the given DeviceID (the shape then stands for the scan).
import assert from 'node:assert/strict';
import { keepaliveShapeOf, scanKeepalive } from '../src/index.ts';
import { allSamples, test } from './support.ts';

const ID = '34020000001320000001';
const OTHER = '34020000001320000002';
const body = (o: { sn?: string; id?: string; decl?: string; sep?: string; status?: string } = {}): string => {
  const sep = o.sep ?? '\r\n';
  const status = o.status === undefined ? '<Status>OK</Status>' : o.status;
  return [o.decl ?? '<?xml version="1.0" encoding="GB2312"?>', '<Notify>', '<CmdType>Keepalive</CmdType>', `<SN>${o.sn ?? '17'}</SN>`, `<DeviceID>${o.id ?? ID}</DeviceID>`, ...(status === '' ? [] : [status]), '</Notify>', ''].join(sep);
};
/** As the handler sees it: the datagram's text, the body from `start`. */
const HEAD = 'MESSAGE sip:x SIP/2.0\r\nContent-Length: 0\r\n\r\n';
const datagram = (b: string): string => HEAD + b;

/** The invariant: a match means the scan reads the body with the shape's charset and that DeviceID. */
function agrees(text: string, deviceId: string, shape = keepaliveShapeOf(datagram(body()), HEAD.length, ID)): boolean {
  assert.ok(shape !== undefined);
  const matched = shape.matches(text, HEAD.length, deviceId);
  const scanned = scanKeepalive(text, HEAD.length);
  if (matched) assert.deepEqual([scanned?.deviceId, scanned?.charset], [deviceId, shape.charset], JSON.stringify(text));
  return matched;
}

test('keepalive shape: made from a usual body, the same object for the same shape', () => {
  const a = keepaliveShapeOf(datagram(body({ sn: '1' })), HEAD.length, ID);
  const b = keepaliveShapeOf(datagram(body({ sn: '99999', id: OTHER })), HEAD.length, OTHER);
  assert.ok(a !== undefined);
  assert.equal(a, b, 'the SN and the DeviceID are the holes');
  assert.equal(a.charset, 'GB2312');
  assert.equal(keepaliveShapeOf(datagram(body({ decl: '<?xml version="1.0" encoding="UTF-8"?>' })), HEAD.length, ID)?.charset, 'UTF-8');
  assert.equal(keepaliveShapeOf(datagram(body()), HEAD.length, OTHER), undefined, 'another id than the body names');
  const short = keepaliveShapeOf(datagram(body({ id: ID.slice(2) })), HEAD.length, ID.slice(2));
  assert.ok(short !== undefined && short !== a, 'an 18-char id: another shape');
  assert.equal(short.matches(datagram(body({ id: ID.slice(2), sn: '3' })), HEAD.length, ID.slice(2)), true);
  assert.equal(short.matches(datagram(body({ sn: '3' })), HEAD.length, ID), false);
  // read by the scan, but not by the usual-shape regex (order, spelling): no shape
  assert.equal(keepaliveShapeOf(datagram(body().replace(`<SN>17</SN>\r\n<DeviceID>${ID}</DeviceID>`, `<DeviceID>${ID}</DeviceID>\r\n<SN>17</SN>`)), HEAD.length, ID), undefined);
  assert.equal(keepaliveShapeOf(datagram(body({ decl: "<?xml version='1.0' encoding='GB2312'?>" })), HEAD.length, ID), undefined);
});

test('keepalive shape: another SN and the same id match, and the scan reads them so', () => {
  for (const sn of ['0', '1', '17', '123456', '9'.repeat(20)]) assert.equal(agrees(datagram(body({ sn })), ID), true, sn);
  for (const sep of ['\n', ' ', '']) {
    const shape = keepaliveShapeOf(datagram(body({ sep })), HEAD.length, ID);
    assert.equal(agrees(datagram(body({ sep, sn: '4242' })), ID, shape), true);
    assert.equal(agrees(datagram(body({ sn: '4242' })), ID, shape), sep === '\r\n');
  }
  const noStatus = keepaliveShapeOf(datagram(body({ status: '' })), HEAD.length, ID);
  assert.equal(agrees(datagram(body({ status: '', sn: '5' })), ID, noStatus), true);
});

test('keepalive shape: anything else does not match (the scan decides)', () => {
  const misses = [
    body({ sn: '' }),
    body({ sn: '9'.repeat(21) }),
    body({ sn: '1a' }),
    body({ sn: ' 1' }),
    body({ sn: '-1' }),
    body({ sn: '1.5' }),
    body({ sn: '1' }).replace('<SN>1</SN>', '<SN>1</SN >'),
    body({ id: OTHER }),
    body({ id: `${ID}0` }),
    body({ id: ID.slice(1) }),
    body({ status: '<Status>ERROR</Status>' }),
    body({ status: '' }),
    body({ decl: '<?xml version="1.0" encoding="UTF-8"?>' }),
    body({ sep: '\n' }),
    `${body()} `,
    `${body()}\0`,
    body().slice(0, -1),
    ` ${body()}`,
    body().replace('Keepalive', 'keepalive'),
    body().replace('</Notify>', '<Info/></Notify>'),
    body() + 'x'.repeat(1024),
  ];
  for (const m of misses) assert.equal(agrees(datagram(m), ID), false, JSON.stringify(m));
  // the body must start where the caller says and run to the end of the text
  assert.equal(keepaliveShapeOf(datagram(body()), HEAD.length, ID)?.matches(`x${datagram(body())}`, HEAD.length, ID), false);
});

test('keepalive shape: every captured keepalive body the regex reads has a shape it matches with another SN', () => {
  let shaped = 0;
  for (const s of allSamples()) {
    const text = Buffer.from(s.bytes).toString('latin1');
    const name = `${s.file}/${s.index}`;
    const scanned = scanKeepalive(text);
    if (scanned === undefined) continue;
    const shape = keepaliveShapeOf(text, 0, scanned.deviceId);
    if (shape === undefined) continue;
    shaped++;
    assert.equal(shape.matches(text, 0, scanned.deviceId), true, name);
    const again = text.replace(`<SN>${scanned.sn}</SN>`, '<SN>31337</SN>');
    assert.equal(shape.matches(again, 0, scanned.deviceId), true, name);
    assert.deepEqual(scanKeepalive(again), { ...scanned, sn: '31337' }, name);
  }
  assert.ok(shaped > 0, 'some capture has the usual shape');
});
