import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'ioredis';
import { encodeKeyedEvalsha } from './encoded-script.redis.ts';

const SHA = 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db';

/** What ioredis itself writes for the same EVALSHA (keys built as ownership.redis.ts builds them). */
function ioredisBytes(prefix: string, ids: readonly string[], argv: readonly string[]): string {
  const out = new Command('evalsha', [SHA, ids.length, ...ids.map((id) => `${prefix}{${id}}`), ...argv]).toWritable({} as never);
  return typeof out === 'string' ? out : out.toString('utf8');
}

describe('encodeKeyedEvalsha (issue 11 target 4b)', () => {
  const cases: [string, string, string[], string[]][] = [
    ['one device', 'vms:owner:', ['34020000001320000001'], ['node-a', '210000']],
    ['many devices', 'vms:owner:', Array.from({ length: 500 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`), ['node-a', '210000']],
    ['no devices', 'vms:owner:', [], ['node-a', '1']],
    ['key-special and multi-byte ids, a test prefix', 'vms:test:ab12:', ['a}b', '{x}', 'dev ice', '设备-1', 'é', ''], ['节点-a', '5']],
    ['an empty prefix', '', ['1', '22'], ['x', '9']],
  ];
  for (const [what, prefix, ids, argv] of cases) {
    it(`writes what ioredis writes: ${what}`, () => {
      assert.equal(encodeKeyedEvalsha(SHA, prefix, ids, argv), ioredisBytes(prefix, ids, argv));
    });
  }
});
