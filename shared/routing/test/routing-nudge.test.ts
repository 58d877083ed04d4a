// The nudge channel carries two hints (routing-nudge.redis.ts): a version to check now, and, earlier, that a
// version of so many rules is being published (receivers warm their build thread). Both are hints: malformed
// text never reaches onPrepare, and an instance that gives no onPrepare reads the prepare hint as a nudge.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { publishRoutingNudge, publishRoutingPrepare, ROUTING_NUDGE_CHANNEL, subscribeRoutingNudges, type NudgeSubscriber } from '../src/routing-nudge.redis.ts';

/** One channel's pub/sub in memory: what publish sends, every subscriber hears. */
function bus(): { pub: { publish(ch: string, m: string): Promise<number> }; sub(): NudgeSubscriber } {
  const e = new EventEmitter();
  return {
    pub: { publish: async (ch, m) => (e.emit('message', ch, m), 1) },
    sub: () => ({ subscribe: async () => undefined, unsubscribe: async () => undefined, on: (ev, l) => e.on(ev, l), off: (ev, l) => e.off(ev, l) }),
  };
}

describe('routing nudge channel', () => {
  it('a receiver hears versions as nudges and rule counts as prepare hints; malformed text is a nudge without a version', async () => {
    const b = bus();
    const nudges: (number | undefined)[] = [];
    const prepares: number[] = [];
    const old: (number | undefined)[] = [];
    await subscribeRoutingNudges(b.sub(), (v) => nudges.push(v), (n) => prepares.push(n));
    await subscribeRoutingNudges(b.sub(), (v) => old.push(v)); // an instance without onPrepare
    await publishRoutingPrepare(b.pub, 1_000_000);
    await publishRoutingNudge(b.pub, 7);
    for (const m of ['warm:', 'warm:-1', 'warm:1e6', `warm:${'9'.repeat(40)}`, 'x']) await b.pub.publish(ROUTING_NUDGE_CHANNEL, m);
    await b.pub.publish('another', 'warm:5');
    assert.deepEqual(prepares, [1_000_000]);
    assert.deepEqual(nudges, [7, undefined, undefined, undefined, undefined, undefined]);
    assert.deepEqual(old, [undefined, 7, undefined, undefined, undefined, undefined, undefined], 'the hint is one check more there');
  });
});
