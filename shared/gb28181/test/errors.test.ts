// Pins the error catalog: codes are a public contract (STYLE §2), so any change must show up here.
import assert from 'node:assert/strict';
import * as gb from '../src/index.ts';
import { test } from './support.ts';

test('the code table is exactly this', () => {
  assert.deepEqual(Object.values(gb.GB_ERROR_CODES), [
    'GB_ERR_XML',
    'GB_ERR_DOCTYPE',
    'GB_ERR_NOT_MANSCDP',
    'GB_ERR_CHARSET',
    'GB_ERR_TOO_LARGE',
    'GB_ERR_MISSING_FIELD',
    'GB_ERR_INVALID_FIELD',
    'GB_ERR_WRONG_COMMAND',
    'GB_ERR_ID',
    'GB_ERR_PTZ',
    'GB_ERR_SDP',
    'GB_ERR_RTSP',
    'GB_ERR_TIME',
    'GB_ERR_ARGUMENT',
  ]);
});

test('each error class carries its code, its name and extra context', () => {
  const cases: Array<[gb.GbError, string, string]> = [
    [new gb.GbXmlError('x'), 'GB_ERR_XML', 'GbXmlError'],
    [new gb.GbDoctypeError('x'), 'GB_ERR_DOCTYPE', 'GbDoctypeError'],
    [new gb.GbNotManscdpError('Foo'), 'GB_ERR_NOT_MANSCDP', 'GbNotManscdpError'],
    [new gb.GbCharsetError('x'), 'GB_ERR_CHARSET', 'GbCharsetError'],
    [new gb.GbTooLargeError(10, 5), 'GB_ERR_TOO_LARGE', 'GbTooLargeError'],
    [new gb.GbMissingFieldError('SN'), 'GB_ERR_MISSING_FIELD', 'GbMissingFieldError'],
    [new gb.GbInvalidFieldError('SumNum', 'x'), 'GB_ERR_INVALID_FIELD', 'GbInvalidFieldError'],
    [new gb.GbWrongCommandError('a', 'b'), 'GB_ERR_WRONG_COMMAND', 'GbWrongCommandError'],
    [new gb.GbIdError('x'), 'GB_ERR_ID', 'GbIdError'],
    [new gb.GbPtzError('x'), 'GB_ERR_PTZ', 'GbPtzError'],
    [new gb.GbSdpError('x'), 'GB_ERR_SDP', 'GbSdpError'],
    [new gb.GbRtspError('x'), 'GB_ERR_RTSP', 'GbRtspError'],
    [new gb.GbTimeError('x'), 'GB_ERR_TIME', 'GbTimeError'],
    [new gb.GbArgumentError('x'), 'GB_ERR_ARGUMENT', 'GbArgumentError'],
  ];
  assert.equal(cases.length, Object.keys(gb.GB_ERROR_CODES).length);
  for (const [err, code, name] of cases) {
    assert.equal(err.code, code);
    assert.equal(err.name, name);
    assert.ok(err instanceof Error && gb.isGbError(err));
  }
  assert.equal(gb.isGbError(new Error('plain')), false);
  const missing = new gb.GbMissingFieldError('SN');
  assert.equal(missing.field, 'SN');
  const tooLarge = new gb.GbTooLargeError(10, 5);
  assert.deepEqual([tooLarge.size, tooLarge.limit], [10, 5]);
});

test('wrapped parser failures keep the cause', () => {
  try {
    gb.parseManscdp('<Notify><__proto__>x</__proto__></Notify>');
    assert.fail('should throw');
  } catch (err) {
    assert.ok(err instanceof gb.GbXmlError);
    assert.ok(err.cause instanceof Error);
  }
});
