// Fuzzing the hook parser (STYLE §10): whatever arrives at /vms/webhook, the handler answers with a
// result and never throws. Seeded PRNG, so a failure is reproducible.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prng, randomJson, randomObject } from '@vms/harness/fuzz';
import { MEDIA_HOOK_NAMES, createHookHandler } from '../src/index.ts';

const KEYS = ['mediaServerId', 'general.mediaServerId', 'regist', 'app', 'stream', 'schema', 'vhost', 'local_port', 'stream_id', 'tcp_mode', 're_use_port', 'ssrc', 'data', 'ip', 'port', 'params', 'id', '__proto__', 'constructor'];

describe('hook handler fuzz', () => {
  it('never throws on random bodies, names and queries', () => {
    const rnd = prng(28181);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const value = (depth: number): unknown => randomJson(rnd, KEYS, 'zlm-a', depth);
    const obj = (depth: number): Record<string, unknown> => randomObject(rnd, KEYS, 'zlm-a', depth);
    const handle = createHookHandler({ lookupNode: (id) => (id === 'zlm-a' ? { secret: 's' } : undefined) });
    const names = [...MEDIA_HOOK_NAMES, 'on_play', '', '../x', 'constructor', 'toString'];
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const body = rnd() < 0.9 ? obj(0) : value(0);
      const r = handle(pick(names), body, rnd() < 0.8 ? { secret: 's' } : { secret: value(1) });
      assert.equal(typeof r.reply.code, 'number');
      if (r.ok) accepted++;
    }
    assert.ok(accepted > 0, 'some random bodies are valid hooks');
  });
});
