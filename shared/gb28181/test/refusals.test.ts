// Hostile and broken bodies end in a typed error (or are tolerated where devices need it), never
// in another exception.
import assert from 'node:assert/strict';
import {
  decodeCatalogResponse,
  decodeKeepalive,
  decodeManscdpCommand,
  decodeRecordInfoQuery,
  DEFAULT_MAX_BODY_BYTES,
  parseManscdp,
  type ManscdpNode,
} from '../src/index.ts';
import { sample, test, throwsGb } from './support.ts';

const KEEPALIVE = '<Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>34020000001320000001</DeviceID><Status>OK</Status></Notify>';

test('DOCTYPE and ENTITY declarations are refused, never expanded', () => {
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE Notify [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' +
    '<Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>&b;</DeviceID></Notify>';
  throwsGb(() => parseManscdp(laughs), 'GB_ERR_DOCTYPE');
  throwsGb(() => parseManscdp('<!doctype Notify SYSTEM "file:///etc/passwd">' + KEEPALIVE), 'GB_ERR_DOCTYPE');
  throwsGb(() => parseManscdp('<Notify><!ENTITY x "y"></Notify>'), 'GB_ERR_DOCTYPE');
  throwsGb(() => parseManscdp(Buffer.from(`<?xml version="1.0" encoding="GB2312"?>\n<!DOCTYPE x>${KEEPALIVE}`)), 'GB_ERR_DOCTYPE');
});

test('only predefined entities and character references are decoded; others stay literal', () => {
  const msg = parseManscdp(
    '<Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>d</DeviceID><Status>&lt;&amp;&#20013;&#x56FD;&xxe;&#0;</Status></Notify>',
  );
  assert.equal(decodeKeepalive(msg).status, '<&中国&xxe;&#0;');
});

test('oversize bodies are refused; the limit is configurable', () => {
  const big = Buffer.alloc(DEFAULT_MAX_BODY_BYTES + 1, 0x20);
  throwsGb(() => parseManscdp(big), 'GB_ERR_TOO_LARGE');
  throwsGb(() => parseManscdp(KEEPALIVE, { maxBytes: 50 }), 'GB_ERR_TOO_LARGE');
  // the 7.7 KB RecordInfo datagram of sample 10 is within the default
  assert.equal(parseManscdp(sample('10', 1).bytes).cmdType, 'RecordInfo');
  // a long TCP catalog passes with a raised limit
  const item = '<Item><DeviceID>34020000001310000001</DeviceID><Name>camera</Name></Item>';
  const long = `<Response><CmdType>Catalog</CmdType><SN>1</SN><DeviceID>d</DeviceID><SumNum>2000</SumNum><DeviceList Num="2000">${item.repeat(2000)}</DeviceList></Response>`;
  throwsGb(() => parseManscdp(long), 'GB_ERR_TOO_LARGE');
  assert.equal(decodeCatalogResponse(parseManscdp(long, { maxBytes: 1 << 20 })).items.length, 2000);
});

test('garbage and broken XML end in typed errors', () => {
  throwsGb(() => parseManscdp(''), 'GB_ERR_XML');
  throwsGb(() => parseManscdp('hello'), 'GB_ERR_XML');
  throwsGb(() => parseManscdp('<Notify><CmdType>Keepalive</CmdType>'), 'GB_ERR_XML');
  throwsGb(() => parseManscdp('<Notify></Query>'), 'GB_ERR_XML');
  throwsGb(() => parseManscdp(`${KEEPALIVE}${KEEPALIVE}`), 'GB_ERR_XML');
  throwsGb(() => parseManscdp('<Notify><SN a="1" a="2">1</SN></Notify>'), 'GB_ERR_XML');
  throwsGb(() => parseManscdp('<Notify><__proto__>x</__proto__></Notify>'), 'GB_ERR_XML');
  throwsGb(() => parseManscdp(`${'<a>'.repeat(1000)}${'</a>'.repeat(1000)}`), 'GB_ERR_XML');
  throwsGb(() => parseManscdp(Buffer.from([0xff, 0xfe, 0xfd, 0x00, 0x81])), 'GB_ERR_CHARSET');
  throwsGb(() => parseManscdp('<Foo><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>d</DeviceID></Foo>'), 'GB_ERR_NOT_MANSCDP');
});

test('missing or malformed mandatory fields', () => {
  throwsGb(() => parseManscdp('<Notify><SN>1</SN><DeviceID>d</DeviceID></Notify>'), 'GB_ERR_MISSING_FIELD');
  throwsGb(() => parseManscdp('<Notify><CmdType>Keepalive</CmdType><DeviceID>d</DeviceID></Notify>'), 'GB_ERR_MISSING_FIELD');
  throwsGb(() => parseManscdp('<Notify><CmdType>Keepalive</CmdType><SN></SN><DeviceID>d</DeviceID></Notify>'), 'GB_ERR_MISSING_FIELD');
  throwsGb(() => parseManscdp('<Notify><CmdType>Keepalive</CmdType><SN>1</SN></Notify>'), 'GB_ERR_MISSING_FIELD');
  throwsGb(() => parseManscdp('<Notify><CmdType><x/></CmdType><SN>1</SN><DeviceID>d</DeviceID></Notify>'), 'GB_ERR_INVALID_FIELD');
  const rq = parseManscdp('<Query><CmdType>RecordInfo</CmdType><SN>1</SN><DeviceID>d</DeviceID><EndTime>x</EndTime></Query>');
  throwsGb(() => decodeRecordInfoQuery(rq), 'GB_ERR_MISSING_FIELD');
  const catalog = (inner: string): ReturnType<typeof parseManscdp> =>
    parseManscdp(`<Response><CmdType>Catalog</CmdType><SN>1</SN><DeviceID>d</DeviceID>${inner}</Response>`);
  throwsGb(() => decodeCatalogResponse(catalog('<SumNum>many</SumNum>')), 'GB_ERR_INVALID_FIELD');
  throwsGb(() => decodeCatalogResponse(catalog('<DeviceList><Item>text</Item></DeviceList>')), 'GB_ERR_INVALID_FIELD');
  throwsGb(() => decodeCatalogResponse(catalog('<DeviceList><Item><Name>no id</Name></Item></DeviceList>')), 'GB_ERR_MISSING_FIELD');
  throwsGb(() => decodeCatalogResponse(parseManscdp(KEEPALIVE)), 'GB_ERR_WRONG_COMMAND');
});

test('tolerated quirks: case, whitespace, NUL terminator, single Item, unknown CmdType', () => {
  const lower = parseManscdp('\r\n  <notify>\n <cmdtype> KEEPALIVE </cmdtype><sn>7</sn><deviceid>d</deviceid><status>OK</status></notify>\0\0');
  assert.deepEqual([lower.root, lower.cmdType, lower.sn], ['Notify', 'Keepalive', '7']);
  assert.deepEqual(decodeKeepalive(lower), { sn: '7', deviceId: 'd', status: 'OK' });

  const one = parseManscdp('<Response><CmdType>catalog</CmdType><SN>1</SN><DeviceID>d</DeviceID><SumNum>1</SumNum><DeviceList Num="1"><Item><DeviceID>c</DeviceID></Item></DeviceList></Response>');
  assert.deepEqual((one.fields['DeviceList'] as ManscdpNode)['Item'], [{ DeviceID: 'c' }]);

  const vendor = parseManscdp('<Notify><CmdType>VendorThing</CmdType><SN>1</SN><DeviceID>d</DeviceID><X>1</X></Notify>');
  assert.deepEqual(decodeManscdpCommand(vendor), {
    kind: 'generic',
    body: { root: 'Notify', cmdType: 'VendorThing', sn: '1', deviceId: 'd', fields: { X: '1' }, encoding: { charset: 'UTF-8', mismatch: false } },
  });
  // empty list element and a SumNum larger than the page: data, not errors
  const empty = decodeCatalogResponse(parseManscdp('<Response><CmdType>Catalog</CmdType><SN>1</SN><DeviceID>d</DeviceID><SumNum>5</SumNum><DeviceList Num="0"/></Response>'));
  assert.deepEqual([empty.sumNum, empty.items], [5, []]);
});

test('pathological inputs stay fast (no quadratic regex on long whitespace / NUL runs)', () => {
  const inputs: Array<[string, 'GB_ERR_XML' | 'GB_ERR_NOT_MANSCDP']> = [
    [`<a>${' '.repeat(60_000)}x</a>`, 'GB_ERR_NOT_MANSCDP'], // well-formed, wrong root
    [`${' '.repeat(30_000)}x${' '.repeat(30_000)}y`, 'GB_ERR_XML'],
    [`<a>x</a>${'\0'.repeat(60_000)}x`, 'GB_ERR_XML'],
    [`<!${' '.repeat(60_000)}x`, 'GB_ERR_XML'],
    [`<a b="${'x'.repeat(60_000)}`, 'GB_ERR_XML'],
    ['<'.repeat(60_000), 'GB_ERR_XML'],
    [`<a>${'&'.repeat(60_000)}</a>`, 'GB_ERR_XML'],
    [`<a>${'<b/>'.repeat(16_000)}</a>`, 'GB_ERR_NOT_MANSCDP'],
  ];
  for (const [input, code] of inputs) {
    const started = performance.now();
    throwsGb(() => parseManscdp(input), code);
    assert.ok(performance.now() - started < 1000, `slow on ${JSON.stringify(input.slice(0, 12))}`);
  }
});
