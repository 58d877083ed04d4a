// Validation reports every problem of a change set at once, with where it is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rule, TableSource } from '../src/index.ts';
import { compileTable, validateTable, MAX_ISSUES } from '../src/index.ts';
import { dest, set, source } from './fixtures.ts';

const ok = source({
  destinations: [dest('a'), dest('b')],
  sets: [set('s', 'swrr', [['a', 2], ['b', 1]]), set('t', 'priority', [['a', 1, 0], ['b', 1, 1]])],
  rules: [{ id: 1, group: 'media', field: 'device', prefix: '34', priority: 0, setId: 's' }],
});

describe('table validation', () => {
  it('a good table has no issues', () => {
    assert.deepEqual(validateTable(ok), { issues: [], more: 0 });
  });

  it('finds duplicate ids whether the rules come in id order or not', () => {
    // stores read in id order (no id set while ids rise); the set is made at the first id out of order,
    // from every id seen before it, invalid rules' ids included
    const r = (id: number, prefix = String(id)): Rule => ({ id, group: 'media', field: 'device', prefix, priority: 0, setId: 's' });
    const paths = (rules: Rule[]): string[] => validateTable({ ...ok, rules }).issues.map((i) => `${i.path}: ${i.message}`);
    assert.deepEqual(paths([r(5), r(7), r(6), r(9), r(7, '70'), r(5, '50')]), ['rules[4] (id 7): duplicate id', 'rules[5] (id 5): duplicate id']);
    assert.deepEqual(paths([r(2), r(3, 'x'), r(3, '30')]), ['rules[1] (id 3): prefix must be 0..24 digits', 'rules[2] (id 3): duplicate id']);
    assert.deepEqual(paths([r(2), r(3, 'x'), r(1), r(3, '30')]), ['rules[1] (id 3): prefix must be 0..24 digits', 'rules[3] (id 3): duplicate id']);
    assert.deepEqual(paths([r(3), r(2), r(1)]), []);
  });

  it('reports every problem, each with its place', () => {
    const bad = {
      version: -1,
      timeZone: 'Mars/Olympus',
      destinations: [dest('a'), dest('a'), { id: 'c', kind: 'ftp', address: '' }],
      sets: [
        { id: 's', algorithm: 'fastest', members: [{ destinationId: 'zz', weight: 1, priority: 0 }] },
        { id: 'u', algorithm: 'swrr', members: [{ destinationId: 'a', weight: -1, priority: 0 }, { destinationId: 'a', weight: 1.5, priority: 0 }] },
        { id: 'e', algorithm: 'random', members: [] },
      ],
      rules: [
        { id: 1, group: 'media', field: 'device', prefix: '34a', priority: 0, setId: 'nope' },
        { id: 1, group: '', field: 'origin', prefix: '1'.repeat(25), priority: 0.5, setId: 'u' },
        { id: 3, group: 'media', field: 'device', prefix: '', priority: 0, setId: 'u', window: { from: '2026-02-30', start: '25:00', end: '10:00', days: [0, 8] } },
        {
          id: 4,
          group: 'media',
          field: 'device',
          prefix: '1',
          priority: 0,
          setId: 'u',
          release: { canarySetId: 'u', key: 'cookie', steps: [10, 5, 120], step: 3, conditions: [{ field: 'source', op: 'cidr', value: '10.0.0.0/33' }, { field: 'caller', op: 'regex', value: '(' }] },
        },
        { id: 5, group: 'media', field: 'device', prefix: '2', priority: 0, setId: 'u' },
        { id: 6, group: 'media', field: 'device', prefix: '2', priority: 0, setId: 'u' },
      ],
    } as unknown as TableSource;
    const { issues } = validateTable(bad);
    const text = issues.map((i) => `${i.path}: ${i.message}`);
    const expect = [
      'version: must be a non-negative integer',
      "timeZone: 'Mars/Olympus' is not an IANA time zone",
      'destinations[1] (id a): duplicate id',
      "destinations[2] (id c): kind 'ftp' is not one of sip, http, media, shard",
      'destinations[2] (id c): address must be 1..512 characters',
      "sets[0] (id s): algorithm 'fastest' is not one of",
      "sets[0] (id s).members[0]: destination 'zz' does not exist",
      'sets[1] (id u).members[0]: weight must be an integer 0..1000000',
      "sets[1] (id u).members[1]: destination 'a' is listed twice",
      'sets[1] (id u).members[1]: weight must be an integer 0..1000000',
      'sets[2] (id e): a set needs at least one member',
      'rules[0] (id 1): prefix must be 0..24 digits',
      "rules[0] (id 1): set 'nope' does not exist",
      'rules[1] (id 1): group must be 1..128 characters',
      "rules[1] (id 1): field 'origin' is not device, caller or callee",
      'rules[1] (id 1): prefix must be 0..24 digits',
      'rules[1] (id 1): priority must be an integer',
      'rules[1] (id 1): duplicate id',
      "rules[2] (id 3): window: from '2026-02-30' is not a date YYYY-MM-DD",
      'rules[2] (id 3): window: day 0 is not an ISO week day 1..7',
      'rules[2] (id 3): window: day 8 is not an ISO week day 1..7',
      "rules[2] (id 3): window: start '25:00' is not HH:MM",
      'rules[3] (id 4): release: step 1 (5) does not grow',
      'rules[3] (id 4): release: step 2 (120) is not a percentage in (0, 100]',
      'rules[3] (id 4): release: step index 3 is not -1 or an index of steps',
      "rules[3] (id 4): release: key 'cookie' is not one of",
      "rules[3] (id 4): release: condition 0: '10.0.0.0/33' is not an IPv4 or IPv6 CIDR",
      "rules[3] (id 4): release: condition 1: '(' is not a valid regular expression",
      "rules[3] (id 4): release: canary set is the rule's own set",
      'rules[5] (id 6): same group, field, prefix, priority and window as rule id 5',
    ];
    for (const e of expect) assert.ok(text.some((t) => t.startsWith(e)), `missing: ${e}\n got:\n${text.join('\n')}`);
    assert.equal(text.length, expect.length, text.join('\n'));
  });

  it('bounds the report: past MAX_ISSUES only a count', () => {
    const rules: Rule[] = Array.from({ length: MAX_ISSUES + 50 }, (_, i) => ({ id: i + 1, group: 'g', field: 'device', prefix: 'x', priority: 0, setId: 's' }));
    const r = compileTable({ ...ok, rules });
    assert.ok(!r.ok);
    assert.equal(r.issues.length, MAX_ISSUES);
    assert.equal(r.more, 50);
  });

  it('malformed shapes (from operator JSON) are reported, never thrown', () => {
    const shapes: unknown[] = [
      { window: 5 },
      { window: { from: 20260101 } },
      { window: { days: 'mon' } },
      { release: 'yes' },
      { release: { canarySetId: 't', key: 'device', steps: [100], step: 0, conditions: 'x' } },
      { release: { canarySetId: 't', key: 'device', steps: [100], step: 0, conditions: [null, 7] } },
      { release: { canarySetId: 't', key: 'device', steps: '100', step: 0 } },
      { release: { canarySetId: 't', key: 'device', steps: [100], step: 0, window: 'night' } },
    ];
    const badMembers = validateTable({ ...ok, sets: [{ id: 's', algorithm: 'swrr', members: [null, 'a'] } as unknown as TableSource['sets'][number]] });
    assert.deepEqual(badMembers.issues.slice(0, 2).map((i) => i.message), ['must be an object', 'must be an object']);
    for (const extra of shapes) {
      const rules = [{ id: 1, group: 'g', field: 'device', prefix: '', priority: 0, setId: 's', ...(extra as object) }] as Rule[];
      const { issues } = validateTable({ ...ok, rules });
      assert.ok(issues.length > 0, JSON.stringify(extra));
    }
  });

  it('a regex longer than 200 characters is refused (it would run on every request)', () => {
    const rules: Rule[] = [
      { id: 1, group: 'g', field: 'device', prefix: '', priority: 0, setId: 's', release: { canarySetId: 't', key: 'device', steps: [100], step: 0, conditions: [{ field: 'caller', op: 'regex', value: 'a'.repeat(201) }] } },
    ];
    assert.match(validateTable({ ...ok, rules }).issues[0]?.message ?? '', /regex longer than 200/);
  });
});
