// The keepalive pre-scan against the full codec. Contract: whenever scanKeepalive answers, its answer
// is what parseManscdp + decodeManscdpCommand give (Notify/Keepalive, same SN, DeviceID, Status,
// charset); when unsure it answers undefined. Expected acceptances were chosen by hand from the
// captures (samples 03, 04, 14, 17, 18) and the SIPp scenario's body.
import assert from 'node:assert/strict';
import { decodeManscdpCommand, parseManscdp, scanKeepalive, type ScannedKeepalive } from '../src/index.ts';
import { allSamples, test } from './support.ts';

const latin1 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');

/** What the full codec makes of a body, in the scan's terms; null when it is not a keepalive or refused. */
function viaCodec(body: Buffer): ScannedKeepalive | null {
  try {
    const msg = parseManscdp(body);
    const cmd = decodeManscdpCommand(msg);
    if (cmd.kind !== 'Notify/Keepalive') return null;
    return { sn: cmd.body.sn, deviceId: cmd.body.deviceId, status: cmd.body.status, charset: msg.encoding.charset };
  } catch {
    return null;
  }
}

/** The invariant: an answer from the scan is exactly the codec's. */
function agrees(body: Buffer): ScannedKeepalive | undefined {
  const fast = scanKeepalive(body.toString('latin1'));
  if (fast !== undefined) assert.deepEqual(fast, viaCodec(body), `scan and codec differ on ${JSON.stringify(body.toString('latin1'))}`);
  return fast;
}

const ID = '34020000001320000001';
const SIPP_BODY = `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>17</SN>\r\n<DeviceID>${ID}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`;
const b = (s: string): Buffer => Buffer.from(s, 'latin1');

test('keepalive scan: the SIPp bench body, GB2312 declared', () => {
  assert.deepEqual(agrees(b(SIPP_BODY)), { sn: '17', deviceId: ID, status: 'OK', charset: 'GB2312' });
});

test('keepalive scan: every captured keepalive body is read, and read as the codec reads it', () => {
  let keepalives = 0;
  for (const s of allSamples()) {
    const body = Buffer.from(s.bytes);
    const codec = viaCodec(body);
    const fast = agrees(body);
    if (codec !== null) keepalives++;
    else assert.equal(fast, undefined, `${s.file}/${s.index} is not a keepalive`);
  }
  assert.ok(keepalives >= 5, `keepalive samples found: ${keepalives}`);
  // By hand: Hikvision (03, no encoding label → UTF-8 for an ASCII body), Ellean (04/0, UTF-8), sbgb28181 (04/1, single quotes).
  const hik = allSamples().find((s) => s.file.startsWith('03-') && s.index === 0);
  assert.deepEqual(scanKeepalive(latin1(hik?.bytes ?? new Uint8Array())), { sn: '2749', deviceId: '130909113319427420', status: 'OK', charset: 'UTF-8' });
  const sb = allSamples().find((s) => s.file.startsWith('04-') && s.index === 1);
  assert.deepEqual(scanKeepalive(latin1(sb?.bytes ?? new Uint8Array())), { sn: '1', deviceId: '34020000001320000009', status: 'OK', charset: 'GB2312' });
});

test('keepalive scan: accepted variations (order, whitespace, no Status, no declaration, trailing NUL)', () => {
  const cases: Array<[string, ScannedKeepalive]> = [
    [`<Notify><SN>5</SN><DeviceID>${ID}</DeviceID><CmdType>Keepalive</CmdType></Notify>`, { sn: '5', deviceId: ID, status: undefined, charset: 'UTF-8' }],
    [`\n\n <?xml version='1.0' encoding='gbk'?>\t<Notify>\n\t<CmdType>Keepalive</CmdType>  <SN>5</SN>\n<DeviceID>${ID}</DeviceID>\n<Status>ERROR</Status></Notify>\r\n\0`, { sn: '5', deviceId: ID, status: 'ERROR', charset: 'GBK' }],
    [`<?xml version="1.0" encoding="utf-8"?><Notify><CmdType>Keepalive</CmdType><SN>0007</SN><DeviceID>${ID}</DeviceID><Status>OK</Status></Notify>`, { sn: '0007', deviceId: ID, status: 'OK', charset: 'UTF-8' }],
    [`<?xml version="1.0" encoding="ISO-8859-1"?><Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>${ID}</DeviceID></Notify>`, { sn: '1', deviceId: ID, status: undefined, charset: 'UTF-8' }],
  ];
  for (const [body, expected] of cases) assert.deepEqual(agrees(b(body)), expected, body);
});

test('keepalive scan: declines what it does not certainly understand (the codec decides those)', () => {
  const declined = [
    '', // empty
    SIPP_BODY.slice(0, -12), // truncated: no </Notify>
    SIPP_BODY.slice(0, 60), // truncated in the middle of an element
    SIPP_BODY.replace('Keepalive', 'keepalive'), // case variant the codec canonicalises
    SIPP_BODY.replace('<Notify>', '<notify>').replace('</Notify>', '</notify>'),
    SIPP_BODY.replace('<SN>17</SN>', '<SN> 17 </SN>'), // whitespace inside a value: trimmed by the codec
    SIPP_BODY.replace('<SN>17</SN>', '<SN>17</SN><SN>18</SN>'), // repeated element
    SIPP_BODY.replace('<SN>17</SN>', ''), // SN missing: the codec refuses it
    SIPP_BODY.replace(`<DeviceID>${ID}</DeviceID>`, ''), // DeviceID missing
    SIPP_BODY.replace('<CmdType>Keepalive</CmdType>', '<CmdType>Catalog</CmdType>'),
    SIPP_BODY.replace('</Status>', '</Status><Info><DeviceID>34020000001310000001</DeviceID></Info>'), // fault list
    SIPP_BODY.replace('<Status>OK</Status>', '<Status>OK</Status><!-- c -->'),
    SIPP_BODY.replace('<Status>OK</Status>', '<Status>O&amp;K</Status>'),
    SIPP_BODY.replace(ID, `${ID}</DeviceID><DeviceID>`), // nested trickery
    SIPP_BODY.replace('<Notify>', '<Notify a="1">'),
    SIPP_BODY.replace('<DeviceID>', '<DeviceID >'),
    SIPP_BODY.replace('</Notify>', '</Notify>x'), // junk after the root
    SIPP_BODY.replace('</Notify>', '</Notify><Notify/>'), // second root
    `\uFEFF${SIPP_BODY}`, // BOM (as latin1 this is not whitespace either)
    SIPP_BODY.replace('encoding="GB2312"', 'encoding="GB2312" standalone="yes"'),
    SIPP_BODY.replace('version="1.0"', 'version="1.1"'),
    `${' '.repeat(300)}${SIPP_BODY}`, // declaration past the codec's charset probe
    SIPP_BODY + ' '.repeat(1100), // oversized
    SIPP_BODY.replace(ID, `${ID}\xb2`), // a non-ASCII byte in the id
  ];
  for (const body of declined) assert.equal(agrees(b(body)), undefined, JSON.stringify(body));
});

test('keepalive scan: a GB2312 body with Chinese text is left to the codec', () => {
  const [before, after] = SIPP_BODY.split('OK</Status>') as [string, string];
  const gb = Buffer.concat([b(before), Buffer.from([0xd5, 0xfd, 0xb3, 0xa3]), b(`</Status>${after}`)]); // 正常
  assert.equal(viaCodec(gb)?.status, '正常', 'the codec reads it');
  assert.equal(agrees(gb), undefined);
});

test('keepalive scan: mutated keepalives never get a different answer than the codec', () => {
  // Deterministic mutation fuzzing (xorshift32): single-byte replacements, insertions and deletions
  // drawn from XML-significant characters, on the shapes above.
  let state = 0x6b61_7363;
  const rand = (n: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  const alphabet = '<>/ \t\r\n"\'=?!&;0123456789KkSsNnDdIi\0\xa0\xff';
  const seeds = [SIPP_BODY, `<Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>${ID}</DeviceID></Notify>`, `<?xml version='1.0'?><Notify><DeviceID>${ID}</DeviceID><SN>9</SN><CmdType>Keepalive</CmdType><Status>OK</Status></Notify>`];
  let accepted = 0;
  for (let n = 0; n < 20_000; n++) {
    let s = seeds[rand(seeds.length)] as string;
    for (let k = 1 + rand(2); k > 0; k--) {
      const at = rand(s.length + 1);
      const ch = alphabet[rand(alphabet.length)] as string;
      const op = rand(3);
      s = op === 0 ? s.slice(0, at) + ch + s.slice(at + 1) : op === 1 ? s.slice(0, at) + ch + s.slice(at) : s.slice(0, at) + s.slice(at + 1);
    }
    if (agrees(b(s)) !== undefined) accepted++;
  }
  assert.ok(accepted > 1000, `mutants still read as keepalives: ${accepted}`); // whitespace-only changes, mostly
});

test('keepalive scan: the usual body (one-regex path) and its edges, at the end of a datagram too', () => {
  const head = 'MESSAGE sip:x@y SIP/2.0\r\nCSeq: 1 MESSAGE\r\n\r\n';
  const cases: [string, ScannedKeepalive | undefined][] = [
    [SIPP_BODY, { sn: '17', deviceId: ID, status: 'OK', charset: 'GB2312' }],
    [SIPP_BODY.replace('GB2312', 'UTF-8'), { sn: '17', deviceId: ID, status: 'OK', charset: 'UTF-8' }],
    [SIPP_BODY.replace('GB2312', 'gb2312'), { sn: '17', deviceId: ID, status: 'OK', charset: 'GB2312' }],
    [SIPP_BODY.replace('GB2312', 'GBK'), { sn: '17', deviceId: ID, status: 'OK', charset: 'GBK' }],
    [SIPP_BODY.slice(SIPP_BODY.indexOf('<Notify>')), { sn: '17', deviceId: ID, status: 'OK', charset: 'UTF-8' }],
    [SIPP_BODY.replace('<Status>OK</Status>\r\n', ''), { sn: '17', deviceId: ID, status: undefined, charset: 'GB2312' }],
    [`${SIPP_BODY}\0`, { sn: '17', deviceId: ID, status: 'OK', charset: 'GB2312' }],
    [SIPP_BODY.replace('<SN>17', `<SN>${'1'.repeat(21)}`), undefined],
    [SIPP_BODY.replace(ID, `${ID}${'0'.repeat(13)}`), undefined],
    [SIPP_BODY.replace('\r\n<SN>', '\v<SN>'), undefined],
    [SIPP_BODY.replace('\r\n<SN>', '\f<SN>'), undefined],
    [SIPP_BODY.replace('\r\n<SN>', '\xa0<SN>'), undefined],
    [`${SIPP_BODY}\xa0`, undefined],
    [`${SIPP_BODY}x`, undefined],
    [`${' '.repeat(300)}${SIPP_BODY}`, undefined], // declaration past the codec's probe
  ];
  for (const [body, want] of cases) {
    assert.deepEqual(agrees(b(body)), want, JSON.stringify(body));
    assert.deepEqual(scanKeepalive(head + body, head.length), want, `in place: ${JSON.stringify(body)}`);
  }
});
