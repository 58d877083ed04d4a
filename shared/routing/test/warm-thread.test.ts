// A kept-warm build thread (table-worker.ts `keepWarm`): started and warmed up by warm(), so the first real
// build neither starts a thread nor runs cold code; never idled out; replaced when it dies, with a backoff
// for deaths in a row; ended by close(). Time (idle, replacement) on a FakeClock: no sleep decides a result.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/clock';
import {
  createWorkerTableBuilder,
  memoryVersionSource,
  replacementDelayMs,
  keepBuildThreadWarm,
  KEEP_WARM_RULES,
  DEFAULT_BUILD_THREAD_IDLE_MS,
  MAX_BUILD_THREAD_IDLE_MS,
  REPLACE_BASE_MS,
  REPLACE_MAX_MS,
  type BuildThreadLog,
  type TableData,
} from '../src/index.ts';
import { EXITING_SOURCE } from './exiting-source.ts';
import { dest, rule, set } from './fixtures.ts';

const TZ = 'Asia/Shanghai';
const data: TableData = {
  version: 1,
  destinations: [dest('a'), dest('b')],
  sets: [set('s', 'round-robin', [['a'], ['b']])],
  rules: [rule({ setId: 's', prefix: '3402' }), rule({ setId: 's', prefix: '' })],
};
/** Small warm-ups: the tests assert the mechanism, the bench its effect (docs/routing.md). */
const WARMUP = 3000;

/** A log whose lines can be awaited: a thread's death is an event of its own, not a time. */
function recordingLog(): BuildThreadLog & { lines: string[]; next(msg: string): Promise<void> } {
  const lines: string[] = [];
  const waiting: { msg: string; resolve: () => void }[] = [];
  const add = (_o: object, msg: string): void => {
    lines.push(msg);
    for (const w of waiting.filter((x) => x.msg === msg)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  };
  return { lines, info: add, warn: add, next: (msg) => new Promise((resolve) => waiting.push({ msg, resolve })) };
}

describe('kept-warm routing build thread', () => {
  it('warm() starts one thread and builds the warm-up version on it; the first build then pays no thread start', async () => {
    const clock = new FakeClock(0);
    const builder = createWorkerTableBuilder({ source: memoryVersionSource(data), keepWarm: true, warmupRules: WARMUP, clock });
    assert.equal(builder.threads, 0, 'nothing started before warm()');
    const warming = builder.warm();
    assert.equal(builder.threads, 1, 'the thread is started at once, the warm-up runs on it');
    assert.equal(builder.warm(), warming, 'a second call while it runs waits for the same warm-up');
    const times = await warming;
    assert.ok(times !== undefined, 'the warm-up completed');
    assert.equal(times.rules, WARMUP);
    assert.ok(times.threadStartMs > 0 && times.warmupMs > 0, JSON.stringify(times));
    assert.deepEqual(builder.lastWarm, times);
    assert.equal(await builder.warm(), undefined, 'a warm thread is not warmed again');

    const r = await builder.build(1, TZ);
    assert.ok(r?.ok === true);
    assert.equal(r.table.ruleCount, 2);
    assert.equal(builder.last!.threadStartMs, 0, "the build ran on the warmed thread: its start was the warm-up's");
    assert.equal(builder.threads, 1);
    await builder.close();
    assert.equal(builder.threads, 0, 'close ends the thread');
    assert.equal(clock.pending, 0, 'and leaves no timer');
    assert.equal(await builder.warm(), undefined, 'a closed builder starts nothing');
    assert.equal(builder.threads, 0);
  });

  it('setKeepWarm: on keeps the idle thread past idleMs; off ends it idleMs later', async () => {
    const clock = new FakeClock(0);
    const builder = createWorkerTableBuilder({ source: memoryVersionSource(data), idleMs: 60_000, clock });
    assert.equal(builder.keptWarm, false);
    assert.ok((await builder.build(1, TZ))?.ok === true);
    assert.equal(clock.pending, 1, 'an ordinary thread has its idle timer');
    builder.setKeepWarm(true);
    assert.equal(builder.keptWarm, true);
    assert.equal(clock.pending, 0, 'kept: the idle timer is cleared');
    clock.advance(24 * 3600_000);
    assert.equal(builder.threads, 1, 'still there a day later');
    builder.setKeepWarm(false);
    clock.advance(59_999);
    assert.equal(builder.threads, 1);
    clock.advance(1);
    assert.equal(builder.threads, 0, 'ended idleMs after keepWarm was turned off');
    await builder.close();
  });

  it('a build asked for during the warm-up runs after it on the same thread', async () => {
    const builder = createWorkerTableBuilder({ source: memoryVersionSource(data), keepWarm: true, warmupRules: WARMUP, clock: new FakeClock(0) });
    const warming = builder.warm();
    const built = builder.build(1, TZ);
    const [times, r] = await Promise.all([warming, built]);
    assert.ok(times !== undefined, 'the warm-up was not given up for the build');
    assert.ok(r?.ok === true);
    assert.equal(builder.last!.threadStartMs, 0, 'one thread: the build did not start another');
    await builder.close();
  });

  it('idle policy: a kept-warm thread is never idled out; without keepWarm the thread ends after idleMs', async () => {
    const clock = new FakeClock(0);
    const warm = createWorkerTableBuilder({ source: memoryVersionSource(data), keepWarm: true, warmupRules: WARMUP, clock });
    await warm.warm();
    assert.ok((await warm.build(1, TZ))?.ok === true);
    assert.equal(clock.pending, 0, 'no idle timer is armed for a kept-warm thread');
    clock.advance(7 * 24 * 3600_000);
    assert.equal(warm.threads, 1, 'still there a week later');
    await warm.close();

    const idle = createWorkerTableBuilder({ source: memoryVersionSource(data), idleMs: 300, clock });
    assert.ok((await idle.build(1, TZ))?.ok === true);
    assert.equal(idle.threads, 1);
    clock.advance(299);
    assert.equal(idle.threads, 1, 'kept while idle for less than idleMs');
    clock.advance(1);
    assert.equal(idle.threads, 0, 'ended after idleMs idle');
    assert.equal(clock.pending, 0);
    await idle.close();
  });

  it('idleMs outside 0..2^31-1 (Infinity would fire at once: Node clamps it to 1 ms) is refused at creation', () => {
    for (const idleMs of [Infinity, Number.NaN, -1, 1.5, MAX_BUILD_THREAD_IDLE_MS + 1]) {
      assert.throws(() => createWorkerTableBuilder({ source: memoryVersionSource(data), idleMs }), RangeError, String(idleMs));
    }
    assert.throws(() => createWorkerTableBuilder({ source: memoryVersionSource(data), warmupRules: 2_000_000 }), RangeError);
    // the bounds themselves are accepted (nothing is started by creating a builder)
    for (const idleMs of [0, DEFAULT_BUILD_THREAD_IDLE_MS, MAX_BUILD_THREAD_IDLE_MS]) assert.equal(createWorkerTableBuilder({ source: memoryVersionSource(data), idleMs }).threads, 0);
  });

  it('a kept-warm thread that dies is replaced after REPLACE_BASE_MS and warmed again; the builder keeps building', async () => {
    const clock = new FakeClock(0);
    const log = recordingLog();
    const builder = createWorkerTableBuilder({ source: { module: EXITING_SOURCE, export: 'openExitingSource' }, keepWarm: true, warmupRules: WARMUP, clock, log });
    assert.ok((await builder.warm()) !== undefined, "the source's module loads: the warm-up completes");
    // the source's read ends the thread mid-build
    await assert.rejects(builder.build(1, TZ), /exited \(code 3\)/);
    assert.equal(builder.deaths, 1);
    assert.equal(builder.threads, 0);
    assert.ok(log.lines.includes('routing build thread died'));
    assert.equal(clock.pending, 1, 'a replacement is armed');
    clock.advance(REPLACE_BASE_MS - 1);
    assert.equal(builder.threads, 0, 'not before REPLACE_BASE_MS');
    clock.advance(1);
    assert.equal(builder.threads, 1, 'replaced');
    assert.ok(log.lines.includes('routing build thread replaced'));
    const times = await builder.warm();
    assert.ok(times !== undefined && times.threadStartMs > 0, 'the replacement is warmed up (a new thread)');
    assert.equal(builder.threads, 1);
    assert.equal(clock.pending, 0);
    await builder.close();
  });

  it('a thread that dies in its warm-up every time is replaced ever less often (1 s, 2 s, 4 s …); close stops it', async () => {
    const clock = new FakeClock(0);
    const log = recordingLog();
    const module = new URL('./exit-on-import.ts', import.meta.url).href;
    const builder = createWorkerTableBuilder({ source: { module, export: 'none' }, keepWarm: true, warmupRules: WARMUP, clock, log });
    assert.equal(await builder.warm(), undefined, 'the thread died in its warm-up');
    for (let death = 1; death <= 3; death++) {
      assert.equal(builder.deaths, death);
      assert.equal(builder.threads, 0);
      const wait = replacementDelayMs(death);
      clock.advance(wait - 1);
      assert.equal(builder.threads, 0, `no replacement before ${wait} ms`);
      clock.advance(1);
      assert.equal(builder.threads, 1, `replaced after ${wait} ms`);
      const died = log.next('routing build thread died');
      assert.equal(await builder.warm(), undefined);
      await died;
    }
    assert.equal(clock.pending, 1, 'the fourth replacement is armed');
    await builder.close();
    assert.equal(clock.pending, 0, 'close disarms it');
    clock.advance(REPLACE_MAX_MS);
    assert.equal(builder.threads, 0, 'nothing started after close');
  });

  it('replacementDelayMs: doubling from REPLACE_BASE_MS, bounded by REPLACE_MAX_MS', () => {
    const table: [number, number][] = [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [6, 32_000],
      [7, 60_000],
      [100, 60_000],
      [1e9, 60_000],
    ];
    for (const [deaths, ms] of table) assert.equal(replacementDelayMs(deaths), ms, String(deaths));
    assert.equal(REPLACE_BASE_MS, 1000);
    assert.equal(REPLACE_MAX_MS, 60_000);
  });
});

describe('which tables keep their build thread warm', () => {
  it('from KEEP_WARM_RULES rules on', () => {
    for (const [rules, kept] of [
      [0, false],
      [1000, false],
      [KEEP_WARM_RULES - 1, false],
      [KEEP_WARM_RULES, true],
      [1_000_000, true],
    ] as const) {
      assert.equal(keepBuildThreadWarm(rules), kept, String(rules));
    }
  });
});
