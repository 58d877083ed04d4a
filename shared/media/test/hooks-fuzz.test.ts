// Fuzzing the hook parser (STYLE §10): whatever arrives at /vms/webhook, the handler answers with a
// result and never throws. Seeded PRNG, so a failure is reproducible.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MEDIA_HOOK_NAMES, createHookHandler } from '../src/index.ts';

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ['mediaServerId', 'general.mediaServerId', 'regist', 'app', 'stream', 'schema', 'vhost', 'local_port', 'stream_id', 'tcp_mode', 're_use_port', 'ssrc', 'data', 'ip', 'port', 'params', 'id', '__proto__', 'constructor'];

describe('hook handler fuzz', () => {
  it('never throws on random bodies, names and queries', () => {
    const rnd = prng(28181);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const value = (depth: number): unknown => {
      const r = rnd();
      if (r < 0.15) return 'zlm-a';
      if (r < 0.3) return Math.floor(rnd() * 2 ** 33) - 2 ** 32;
      if (r < 0.4) return rnd() < 0.5;
      if (r < 0.5) return null;
      if (r < 0.6) return String(Math.floor(rnd() * 1e12));
      if (r < 0.7 && depth < 3) return Array.from({ length: Math.floor(rnd() * 3) }, () => value(depth + 1));
      if (r < 0.85 && depth < 3) return obj(depth + 1);
      return undefined;
    };
    const obj = (depth: number): Record<string, unknown> => Object.fromEntries(Array.from({ length: Math.floor(rnd() * 8) }, () => [pick(KEYS), value(depth)]));
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
