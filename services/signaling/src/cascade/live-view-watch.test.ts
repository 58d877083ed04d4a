import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../core/clock.ts';
import {
  INITIAL_WATCH,
  judgeStream,
  STREAM_CHECK_MS,
  STREAM_GONE_CHECKS,
  STREAM_UNREACHABLE_CHECKS,
  StreamWatcher,
  type GoneReason,
  type StreamObservation,
  type WatchState,
} from './live-view-watch.ts';

const run = (seen: StreamObservation[]): (GoneReason | null)[] => {
  let s: WatchState = INITIAL_WATCH;
  return seen.map((o) => {
    const r = judgeStream(s, o);
    s = r.state;
    return r.gone;
  });
};
const present = (aliveSecond?: number): StreamObservation => ({ kind: 'present', aliveSecond });
const absent: StreamObservation = { kind: 'absent' };
const unreachable: StreamObservation = { kind: 'unreachable' };

describe('judgeStream', () => {
  it('a present stream is never gone', () => {
    assert.deepEqual(run([present(), present(1), present(5), present()]), [null, null, null, null]);
  });

  it(`absent ${STREAM_GONE_CHECKS} checks in a row: gone; a single miss is forgiven`, () => {
    assert.equal(STREAM_GONE_CHECKS, 2);
    assert.deepEqual(run([present(), absent, present(), absent, absent]), [null, null, null, null, 'stream-gone']);
    assert.deepEqual(run([absent, absent]), [null, 'stream-gone']);
  });

  it('aliveSecond going back: the stream was restarted under the same id', () => {
    assert.deepEqual(run([present(3), present(7), present(2)]), [null, null, 'stream-restarted']);
    // a node that does not report it (undefined) in between does not reset what was seen
    assert.deepEqual(run([present(7), present(), present(1)]), [null, null, 'stream-restarted']);
    assert.deepEqual(run([present(0), present(0), present(1)]), [null, null, null]);
  });

  it(`the node not answering ${STREAM_UNREACHABLE_CHECKS} checks in a row: gone; an answer resets the count`, () => {
    const fourThenAnswer = [...Array<StreamObservation>(STREAM_UNREACHABLE_CHECKS - 1).fill(unreachable), present(), unreachable];
    assert.ok(run(fourThenAnswer).every((g) => g === null));
    const all = run(Array<StreamObservation>(STREAM_UNREACHABLE_CHECKS).fill(unreachable));
    assert.equal(all.at(-1), 'media-node-unreachable');
    assert.ok(all.slice(0, -1).every((g) => g === null));
    // unreachable does not reset a miss already counted: absent, unreachable, absent → gone
    assert.deepEqual(run([absent, unreachable, absent]), [null, null, 'stream-gone']);
  });
});

describe('StreamWatcher (fake clock)', () => {
  const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
  const make = (seen: Map<string, StreamObservation | 'throw'>): { clock: FakeClock; probes: string[]; gone: [string, GoneReason][]; w: StreamWatcher } => {
    const clock = new FakeClock();
    const probes: string[] = [];
    const gone: [string, GoneReason][] = [];
    const w = new StreamWatcher({
      clock,
      probe: async (nodeId, streamId) => {
        probes.push(`${nodeId}/${streamId}`);
        const o = seen.get(streamId) ?? absent;
        if (o === 'throw') throw new Error('node down');
        return o;
      },
      onGone: (key, reason) => gone.push([key, reason]),
    });
    return { clock, probes, gone, w };
  };
  const tick = async (clock: FakeClock): Promise<void> => {
    clock.advance(STREAM_CHECK_MS);
    await flush();
  };

  it('checks every interval, one probe per stream for several views; ends each view once when its stream is gone', async () => {
    const seen = new Map<string, StreamObservation | 'throw'>([
      ['s1', present()],
      ['s2', present()],
    ]);
    const { clock, probes, gone, w } = make(seen);
    assert.equal(clock.pending, 0, 'nothing watched, no timer');
    w.watch('a', 'n1', 's1');
    w.watch('b', 'n1', 's1');
    w.watch('c', 'n1', 's2');
    clock.advance(STREAM_CHECK_MS - 1);
    await flush();
    assert.deepEqual(probes, [], 'not before the interval');
    await tick(clock);
    assert.deepEqual(probes.sort(), ['n1/s1', 'n1/s2'], 'one probe per distinct stream');
    seen.set('s1', absent);
    await tick(clock);
    assert.deepEqual(gone, []);
    await tick(clock);
    assert.deepEqual(gone, [
      ['a', 'stream-gone'],
      ['b', 'stream-gone'],
    ]);
    assert.equal(w.size, 1);
    await tick(clock);
    await tick(clock);
    assert.equal(gone.length, 2, 'each view ended once');
    assert.equal(probes.filter((p) => p === 'n1/s1').length, 3, 'a gone stream is no longer probed');
    w.unwatch('c');
    assert.equal(clock.pending, 0, 'nothing watched, timer cleared');
  });

  it('a probe that rejects counts as the node unreachable', async () => {
    const { clock, gone, w } = make(new Map([['s1', 'throw']]));
    w.watch('a', 'n1', 's1');
    for (let i = 0; i < STREAM_UNREACHABLE_CHECKS - 1; i++) await tick(clock);
    assert.deepEqual(gone, []);
    await tick(clock);
    assert.deepEqual(gone, [['a', 'media-node-unreachable']]);
  });

  it('an unwatched view is not ended; close stops the checks', async () => {
    const { clock, probes, gone, w } = make(new Map());
    w.watch('a', 'n1', 's1');
    await tick(clock);
    w.unwatch('a');
    await tick(clock);
    await tick(clock);
    assert.deepEqual(gone, []);
    assert.equal(probes.length, 1);
    w.watch('b', 'n1', 's1');
    w.close();
    await tick(clock);
    await tick(clock);
    assert.equal(probes.length, 1);
    assert.equal(clock.pending, 0);
    w.watch('c', 'n1', 's1');
    assert.equal(clock.pending, 0, 'closed: watches nothing');
  });
});
