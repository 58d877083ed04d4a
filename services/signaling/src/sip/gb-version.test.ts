import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gbVersionOf } from './gb-version.ts';

const DEV = '34020000001320000001';

describe('device GB version', () => {
  it('X-GB-ver 3.0 (and 3.x) is 2022; 2.0, 1.0, absent or garbage is 2016', () => {
  assert.equal(gbVersionOf('3.0', DEV, []), '2022');
  assert.equal(gbVersionOf(' 3.1 ', DEV, []), '2022');
  assert.equal(gbVersionOf('2.0', DEV, []), '2016');
  assert.equal(gbVersionOf('1.0', DEV, []), '2016');
  assert.equal(gbVersionOf(undefined, DEV, []), '2016');
  assert.equal(gbVersionOf('3.0; drop table', DEV, []), '2016');
});

  it('a configured id or prefix makes the device a 2022 one whatever it sends', () => {
  assert.equal(gbVersionOf(undefined, DEV, ['3402000000132']), '2022');
  assert.equal(gbVersionOf('2.0', DEV, [DEV]), '2022');
  assert.equal(gbVersionOf('2.0', DEV, ['3402000000131']), '2016');
});
});
