// Rule matching: longest prefix over device / caller / callee, priority between equal prefixes, time windows
// that pass a rule over. Expected rules are named in each row, by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rule } from '../src/index.ts';
import { dest, set, source, table } from './fixtures.ts';
import { compileTable } from '../src/index.ts';

const base = { destinations: [dest('a'), dest('b')], sets: [set('A', 'round-robin', [['a']]), set('B', 'round-robin', [['b']])] };
const r = (id: number, field: Rule['field'], prefix: string, over: Partial<Rule> = {}): Rule => ({ id, group: 'media', field, prefix, priority: 0, setId: 'A', ...over });

describe('longest-prefix matching on GB28181 codes', () => {
  const t = table({
    ...base,
    rules: [
      r(1, 'device', ''), // default
      r(2, 'device', '34'), // province (2 digits)
      r(3, 'device', '3402'), // city (4)
      r(4, 'device', '340200'), // district (6)
      r(5, 'device', '34020000001320000001'), // one device (20)
      r(6, 'device', '44'),
      r(7, 'device', '4401', { group: 'placement' }), // another group: never seen by 'media'
      r(8, 'device', '340200000013200000011234'), // 24 digits, longer than any code: never matches a 20-digit code
    ],
  });
  const cases: [string, number | undefined][] = [
    ['34020000001320000001', 5],
    ['34020000001320000002', 4],
    ['34021100001320000001', 3],
    ['34990000001320000001', 2],
    ['44010000001320000001', 6],
    ['11000000001320000001', 1],
    ['3402', 3],
    ['340', 2],
    ['', 1],
    ['34x2000000', 2], // digits up to the first non-digit
  ];
  for (const [device, want] of cases) {
    it(`${JSON.stringify(device)} → rule ${String(want)}`, () => {
      const d = t.decide({ group: 'media', device, now: 0 });
      assert.equal(d.ruleId, want);
      assert.equal(d.matchedField, 'device');
    });
  }

  it('a group without rules decides no-rule; a group matches only its own rules', () => {
    assert.equal(t.decide({ group: 'upstream', device: '34020000001320000001', now: 0 }).reason, 'no-rule');
    assert.equal(t.decide({ group: 'placement', device: '44010000001320000001', now: 0 }).ruleId, 7);
    assert.equal(t.decide({ group: 'placement', device: '44020000001320000001', now: 0 }).reason, 'no-rule');
  });

  it('prefixes beyond 12 digits (the second half of the encoding) are told apart', () => {
    const u = table({
      ...base,
      rules: [r(1, 'device', '3402000000132'), r(2, 'device', '34020000001320'), r(3, 'device', '340200000013200000'), r(4, 'device', '0000000000000')],
    });
    assert.equal(u.decide({ group: 'media', device: '34020000001320000001', now: 0 }).ruleId, 3);
    assert.equal(u.decide({ group: 'media', device: '34020000001321000001', now: 0 }).ruleId, 1);
    assert.equal(u.decide({ group: 'media', device: '34020000001320100001', now: 0 }).ruleId, 2);
    assert.equal(u.decide({ group: 'media', device: '00000000000000', now: 0 }).ruleId, 4);
    assert.equal(u.decide({ group: 'media', device: '000000000000', now: 0 }).reason, 'no-rule', '12 zeros is not the 13-zero prefix');
  });
});

describe('caller / callee and priority', () => {
  const t = table({
    ...base,
    rules: [
      r(10, 'caller', '3402', { priority: 0 }),
      r(11, 'callee', '3402', { priority: 5, setId: 'B' }),
      r(12, 'callee', '340201'),
      r(13, 'caller', '3402', { priority: 9, setId: 'B' }),
      r(14, 'caller', '3402', { priority: 9, window: { start: '09:00', end: '18:00' } }),
    ],
  });

  it('the longest prefix wins across fields', () => {
    assert.equal(t.decide({ group: 'media', caller: '34020000', callee: '34020100', now: 0 }).ruleId, 12);
  });

  it('at equal length the higher priority wins, then the smaller id', () => {
    // caller 3402: rules 13 (prio 9), 14 (prio 9, window), 10 (prio 0); callee 3402: rule 11 (prio 5)
    const night = Date.UTC(2026, 0, 5, 20, 0); // 04:00 in Shanghai: rule 14's window is closed
    const d = t.decide({ group: 'media', caller: '34020000', callee: '34029900', now: night });
    assert.equal(d.ruleId, 13);
    assert.equal(d.destination?.id, 'b');
  });

  it('a rule with the same prefix and priority but a smaller id wins while its window is open', () => {
    const day = Date.UTC(2026, 0, 5, 2, 0); // 10:00 in Shanghai
    assert.equal(t.decide({ group: 'media', caller: '34020000', now: day }).ruleId, 13, 'id 13 < 14 at equal priority');
  });
});

describe('time windows pass a rule over', () => {
  const t = table({
    ...base,
    rules: [
      r(1, 'device', '34'),
      r(2, 'device', '3402', { window: { start: '09:00', end: '18:00', days: [1, 2, 3, 4, 5] }, setId: 'B' }),
      r(3, 'device', '3402', { priority: 1, window: { from: '2026-02-16', until: '2026-02-22' } }), // a holiday week
    ],
  });
  const at = (iso: string): number => Date.parse(iso);
  const cases: [string, string, number][] = [
    ['Monday 10:00 Shanghai', '2026-01-05T10:00:00+08:00', 2],
    ['Monday 18:00 Shanghai (end is exclusive)', '2026-01-05T18:00:00+08:00', 1],
    ['Monday 08:59 Shanghai', '2026-01-05T08:59:00+08:00', 1],
    ['Saturday 10:00 Shanghai', '2026-01-10T10:00:00+08:00', 1],
    ['Friday 17:59 Shanghai', '2026-01-09T17:59:00+08:00', 2],
    ['Monday 01:30 UTC = 09:30 Shanghai', '2026-01-05T01:30:00Z', 2],
    ['holiday Tuesday 10:00: the higher-priority holiday rule', '2026-02-17T10:00:00+08:00', 3],
    ['holiday Sunday 23:59', '2026-02-22T23:59:00+08:00', 3],
    ['the day after the holiday', '2026-02-23T10:00:00+08:00', 2],
  ];
  for (const [name, iso, want] of cases) it(`${name} → rule ${want}`, () => assert.equal(t.decide({ group: 'media', device: '34020000001320000001', now: at(iso) }).ruleId, want));

  it('a window across midnight belongs to the day it starts on', () => {
    const u = table({ ...base, rules: [r(1, 'device', ''), r(2, 'device', '', { priority: 1, window: { start: '22:00', end: '02:00', days: [5] } })] });
    const rule = (iso: string): number | undefined => u.decide({ group: 'media', device: '1', now: at(iso) }).ruleId;
    assert.equal(rule('2026-01-09T23:00:00+08:00'), 2, 'Friday 23:00');
    assert.equal(rule('2026-01-10T01:59:00+08:00'), 2, 'Saturday 01:59 is still Friday night');
    assert.equal(rule('2026-01-10T02:00:00+08:00'), 1, 'Saturday 02:00');
    assert.equal(rule('2026-01-09T01:00:00+08:00'), 1, 'Friday 01:00 belongs to Thursday night');
    assert.equal(rule('2026-01-09T21:59:00+08:00'), 1, 'Friday 21:59');
  });

  it('reads windows in the table\'s zone, across a DST change too (Europe/Berlin)', () => {
    const u = compileTable(source({ ...base, timeZone: 'Europe/Berlin', rules: [r(1, 'device', ''), r(2, 'device', '', { priority: 1, window: { start: '09:00', end: '10:00' } })] }));
    assert.ok(u.ok);
    const rule = (iso: string): number | undefined => u.table.decide({ group: 'media', device: '1', now: at(iso) }).ruleId;
    assert.equal(rule('2026-03-28T08:30:00Z'), 2, 'winter: 09:30 CET');
    assert.equal(rule('2026-03-29T08:30:00Z'), 1, 'summer: 10:30 CEST');
    assert.equal(rule('2026-03-29T07:30:00Z'), 2, 'summer: 09:30 CEST');
  });
});
