// Charset detection and encoding. GB2312 byte values are from the GB2312 code table, written by hand:
// 中 D6D0, 国 B9FA, 模 C4A3, 拟 C4E2, 设 C9E8, 备 B1B8.
import assert from 'node:assert/strict';
import { decodeBody, declaredEncoding, encodeText, normalizeCharset } from '../src/index.ts';
import { test, throwsGb } from './support.ts';

const GB_ZHONGGUO = [0xd6, 0xd0, 0xb9, 0xfa];
const GB_MONI_SHEBEI = [0xc4, 0xa3, 0xc4, 0xe2, 0xc9, 0xe8, 0xb1, 0xb8];
const xml = (decl: string, name: number[]): Buffer =>
  Buffer.concat([Buffer.from(`${decl}<Notify><Name>`), Buffer.from(name), Buffer.from('</Name></Notify>')]);

test('GB2312 / GBK encoding of Chinese text gives the code-table bytes', () => {
  assert.deepEqual([...encodeText('中国', 'GB2312')], GB_ZHONGGUO);
  assert.deepEqual([...encodeText('模拟设备', 'GBK')], GB_MONI_SHEBEI);
  assert.deepEqual([...encodeText('中国', 'GB18030')], GB_ZHONGGUO);
  assert.deepEqual([...encodeText('中', 'UTF-8')], [0xe4, 0xb8, 0xad]);
});

test('characters without a GBK code are refused, not replaced with "?"', () => {
  throwsGb(() => encodeText('camera 😀', 'GB2312'), 'GB_ERR_CHARSET');
  throwsGb(() => encodeText('camera 😀', 'GBK'), 'GB_ERR_CHARSET');
  throwsGb(() => encodeText('lone \ud800 surrogate', 'UTF-8'), 'GB_ERR_CHARSET');
  // GB18030 covers all of Unicode
  assert.equal(decodeBody(encodeText('<a>😀</a>', 'GB18030')).text, '<a>😀</a>');
});

test('GB2312-declared GB bytes decode as GB2312', () => {
  const d = decodeBody(xml('<?xml version="1.0" encoding="GB2312"?>', GB_ZHONGGUO));
  assert.deepEqual(d, {
    text: '<?xml version="1.0" encoding="GB2312"?><Notify><Name>中国</Name></Notify>',
    charset: 'GB2312',
    declared: 'GB2312',
    mismatch: false,
  });
});

test('GB bytes without declaration are taken as GBK', () => {
  const d = decodeBody(xml('', GB_MONI_SHEBEI));
  assert.deepEqual(d, { text: '<Notify><Name>模拟设备</Name></Notify>', charset: 'GBK', mismatch: false });
});

test('GB bytes declared UTF-8: decoded as GBK, mismatch reported', () => {
  const d = decodeBody(xml('<?xml version="1.0" encoding="UTF-8"?>', GB_ZHONGGUO));
  assert.equal(d.charset, 'GBK');
  assert.equal(d.mismatch, true);
  assert.ok(d.text.includes('<Name>中国</Name>'));
});

test('UTF-8 bytes declared GB2312 (sample 06 quirk): UTF-8 wins, mismatch reported', () => {
  const d = decodeBody(xml("<?xml version='1.0' encoding='gb2312'?>", [0xe4, 0xb8, 0xad, 0xe5, 0x9b, 0xbd]));
  assert.equal(d.charset, 'UTF-8');
  assert.equal(d.declared, 'gb2312');
  assert.equal(d.mismatch, true);
  assert.ok(d.text.includes('<Name>中国</Name>'));
});

test('pure ASCII takes the declared charset; unknown labels are reported raw', () => {
  assert.equal(decodeBody(Buffer.from('<?xml version="1.0" encoding="GBK"?><a/>')).charset, 'GBK');
  const d = decodeBody(Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a/>'));
  assert.deepEqual([d.charset, d.declared, d.mismatch], ['UTF-8', 'ISO-8859-1', false]);
});

test('byte order marks: UTF-8 BOM accepted, UTF-16 refused', () => {
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<a>中</a>')]);
  assert.deepEqual(decodeBody(bom), { text: '<a>中</a>', charset: 'UTF-8', mismatch: false });
  throwsGb(() => decodeBody(Buffer.from([0xff, 0xfe, 0x3c, 0x00])), 'GB_ERR_CHARSET');
});

test('bytes valid in neither UTF-8 nor GB18030 are refused', () => {
  throwsGb(() => decodeBody(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0xff, 0x80, 0x3c, 0x2f, 0x61, 0x3e])), 'GB_ERR_CHARSET');
});

test('declaration sniffing and label aliases', () => {
  assert.equal(declaredEncoding(Buffer.from("  <?xml version='1.0' standalone='yes' encoding = 'GBK' ?>")), 'GBK');
  assert.equal(declaredEncoding(Buffer.from('<?xml version="1.0"?><a/>')), undefined);
  assert.equal(normalizeCharset('utf8'), 'UTF-8');
  assert.equal(normalizeCharset('EUC-CN'), 'GB2312');
  assert.equal(normalizeCharset('CP936'), 'GBK');
  assert.equal(normalizeCharset('latin1'), undefined);
});
