import assert from 'node:assert/strict';
import { test } from 'node:test';
import { declaredEncoding, decodeBody, encodeText } from '@vms/gb28181';
import { relabelDeclaration } from '../src/platform-link.ts';

test('relabelDeclaration names another charset and keeps every body byte', () => {
  const gb = encodeText('<?xml version="1.0" encoding="GB2312"?>\r\n<Response><Name>门口</Name></Response>', 'GB2312');
  const out = relabelDeclaration(gb, 'UTF-8');
  assert.equal(declaredEncoding(out), 'UTF-8');
  assert.match(decodeBody(out).text, /门口/, 'the platform-side decoder still reads the GB bytes');
  assert.match(out.toString('latin1', 0, 40), /^<\?xml version="1\.0" encoding="UTF-8"\?>/);
  assert.deepEqual(out.subarray(out.indexOf('?>')), gb.subarray(gb.indexOf('?>')), 'the GB2312 bytes after the declaration are untouched');
  assert.equal(relabelDeclaration(Buffer.from("<?xml version='1.0' encoding='UTF-8'?><a/>"), 'GB2312').toString(), "<?xml version='1.0' encoding='GB2312'?><a/>");
  const bare = Buffer.from('<Notify/>');
  assert.equal(relabelDeclaration(bare, 'UTF-8'), bare, 'no declaration: nothing to relabel');
});
