// Annex D codes, decomposed by hand: 34020000001320000001 = 34 02 00 00 | 00 | 132 | 0 | 000001.
import assert from 'node:assert/strict';
import { isGbId, parseGbId, realmOf } from '../src/index.ts';
import { test, throwsGb } from './support.ts';

test('an IPC id decomposes into centre, industry, type, network and serial', () => {
  assert.deepEqual(parseGbId('34020000001320000001'), {
    id: '34020000001320000001',
    kind: 'channel',
    legacy: false,
    region: { province: '34', city: '02', district: '00', grassroots: '00', code: '34020000' },
    industry: '00',
    type: '132',
    network: '0',
    serial: '000001',
    typeName: 'IPC',
  });
});

test('type codes of the sample ids map to their kinds', () => {
  const kinds = [
    ['34020000001310000001', 'channel', 'camera'], // 131 camera (channels in 05, 10, 11)
    ['34020000001180000001', 'device', 'NVR'], // 118 NVR (VAG lower platform, 16)
    ['34020000001110000001', 'device', 'DVR'], // 111
    ['34020000002000000001', 'platform', 'central signalling control server'], // 200 (platform id everywhere)
    ['64010000002020000001', 'platform', 'media distribution server'], // 202 (SPVMN media server, 17)
    ['34020000002150000001', 'business-group', 'business group'], // 215
    ['34020000002160000001', 'organization', 'virtual organization'], // 216
    ['34020000003000000001', 'user', 'centre user'], // 300
    ['34020000005010000001', 'external', undefined], // 501
    ['34020000009990000001', 'extension', undefined], // 999
  ] as const;
  for (const [id, kind, typeName] of kinds) {
    const p = parseGbId(id);
    assert.equal(p.kind, kind, id);
    assert.equal(p.typeName, typeName, id);
  }
  assert.equal(parseGbId('34010000001310000001').region?.code, '34010000');
  assert.equal(parseGbId('34020000001375000001').network, '5'); // public-security network
});

test('18-digit ids of the 2013 Hikvision capture are accepted as legacy', () => {
  assert.deepEqual(parseGbId('130909113319427420'), { id: '130909113319427420', kind: 'legacy', legacy: true });
  assert.equal(isGbId('130909113319427420'), false);
  assert.equal(isGbId('130909113319427420', true), true);
});

test('isGbId answers false for anything but a string, never throws (JSON bodies reach it)', () => {
  // Found by the fuzz bench (test/bench/fuzz.ts --quick --seed 1, input 946): RegExp.test converts its
  // argument, and an object whose toString is not callable throws TypeError there.
  for (const v of [JSON.parse('{"toString":false}'), JSON.parse('{"toString":"34020000001320000001"}'), Object.create(null), 34020000001320000001, null, undefined, ['34020000001320000001']]) {
    assert.equal(isGbId(v), false);
    assert.equal(isGbId(v, true), false);
  }
});

test('anything else is refused with GB_ERR_ID', () => {
  for (const bad of ['', '3402000000132000000', '340200000013200000012', '3402000000132000000a', '${querydeviceID}', '2133', ' 34020000001320000001']) {
    throwsGb(() => parseGbId(bad), 'GB_ERR_ID');
  }
  assert.equal(isGbId('34020000001320000001'), true);
  assert.equal(isGbId('3402000000132000000x'), false);
});

test('realm = first 10 digits of the server id', () => {
  assert.equal(realmOf('34020000002000000001'), '3402000000');
  assert.equal(realmOf('64010000002020000001'), '6401000000');
  throwsGb(() => realmOf('3402000000'), 'GB_ERR_ID');
});
