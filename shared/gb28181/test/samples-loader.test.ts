// The loader must find every body in the captures: counts and kinds per file were taken by reading
// the files by hand, so a loader bug that silently skips a message fails here.
import assert from 'node:assert/strict';
import { sampleFiles } from './samples.ts';
import { allSamples, test } from './support.ts';

const EXPECTED: Record<string, { manscdp: number; sdp: number; mansrtsp: number }> = {
  '01': { manscdp: 0, sdp: 0, mansrtsp: 0 },
  '02': { manscdp: 0, sdp: 0, mansrtsp: 0 },
  '03': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '04': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '05': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '06': { manscdp: 1, sdp: 0, mansrtsp: 0 },
  '07': { manscdp: 4, sdp: 0, mansrtsp: 0 },
  '08': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '09': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '10': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '11': { manscdp: 2, sdp: 0, mansrtsp: 0 },
  '12': { manscdp: 0, sdp: 4, mansrtsp: 0 },
  '13': { manscdp: 3, sdp: 0, mansrtsp: 0 },
  '14': { manscdp: 15, sdp: 2, mansrtsp: 1 },
  '15': { manscdp: 3, sdp: 0, mansrtsp: 0 },
  '16': { manscdp: 7, sdp: 1, mansrtsp: 0 },
  '17': { manscdp: 7, sdp: 2, mansrtsp: 0 },
  '18': { manscdp: 6, sdp: 1, mansrtsp: 0 },
};

test('every sample file is known to this test', () => {
  assert.deepEqual(sampleFiles().map((f) => f.slice(0, 2)), Object.keys(EXPECTED).sort());
});

test('loader finds every MANSCDP, SDP and MANSRTSP body of every capture', () => {
  for (const [prefix, want] of Object.entries(EXPECTED)) {
    const bodies = allSamples().filter((s) => s.file.startsWith(`${prefix}-`));
    const got = {
      manscdp: bodies.filter((b) => b.kind === 'manscdp').length,
      sdp: bodies.filter((b) => b.kind === 'sdp').length,
      mansrtsp: bodies.filter((b) => b.kind === 'mansrtsp').length,
    };
    assert.deepEqual(got, want, `sample ${prefix}`);
  }
});

test('bodies keep the wire bytes: UTF-8 Chinese under a GB2312 declaration (06)', () => {
  const s = allSamples().find((b) => b.file.startsWith('06-'));
  assert.ok(s);
  assert.equal(s.contentType, 'Application/MANSCDP+xml');
  // 模 is E6 A8 A1 in UTF-8 (U+6A21)
  assert.ok(s.bytes.includes(Buffer.from([0xe6, 0xa8, 0xa1])));
  assert.ok(s.body.startsWith('<?xml version="1.0" encoding="GB2312"?>'));
});
