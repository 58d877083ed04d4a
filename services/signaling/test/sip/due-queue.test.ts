import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DueQueue } from '../../src/sip/due-queue.ts';

describe('DueQueue (one timer for every subscription deadline)', () => {
  it('hands out due keys earliest first and keeps the rest', () => {
    const q = new DueQueue();
    q.schedule('c', 30);
    q.schedule('a', 10);
    q.schedule('b', 20);
    q.schedule('d', 40);
    assert.equal(q.nextDueAt(), 10);
    assert.deepEqual(q.takeDue(25), ['a', 'b']);
    assert.equal(q.nextDueAt(), 30);
    assert.equal(q.size, 2);
    assert.deepEqual(q.takeDue(100), ['c', 'd']);
    assert.equal(q.nextDueAt(), null);
  });

  it('a rescheduled key is due only at its latest deadline; a cancelled one never', () => {
    const q = new DueQueue();
    q.schedule('a', 10);
    q.schedule('b', 15);
    q.schedule('a', 50);
    q.cancel('b');
    assert.equal(q.nextDueAt(), 50);
    assert.deepEqual(q.takeDue(20), []);
    assert.deepEqual(q.takeDue(50), ['a']);
    assert.equal(q.size, 0);
  });

  it('stays bounded under endless rescheduling of a few keys', () => {
    const q = new DueQueue();
    for (let i = 0; i < 100_000; i++) q.schedule(`k${i % 3}`, 1000 - (i % 500));
    assert.equal(q.size, 3);
    // the heap is rebuilt once stale entries outnumber 2x the live ones + 16
    assert.ok(q.backlog <= 2 * q.size + 16, `heap holds ${q.backlog}`);
    const due = q.takeDue(2000);
    assert.deepEqual(due.sort(), ['k0', 'k1', 'k2']);
  });

  it('matches a sorted reference on random deadlines', () => {
    const q = new DueQueue();
    const ref = new Map<string, number>();
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const key = `k${Math.floor(rnd() * 300)}`;
      if (rnd() < 0.1) {
        q.cancel(key);
        ref.delete(key);
      } else {
        const at = Math.floor(rnd() * 10_000);
        q.schedule(key, at);
        ref.set(key, at);
      }
    }
    const expected = [...ref.entries()].sort((x, y) => x[1] - y[1]);
    const got: string[] = [];
    for (let t = 0; t <= 10_000; t += 250) got.push(...q.takeDue(t));
    assert.deepEqual(got.map((k) => ref.get(k)), expected.map(([, at]) => at));
    assert.equal(got.length, ref.size);
  });
});
