// A large version's publish warms the build threads of the other instances too (routing-wiring.ts
// prepareBuild: the warm:<rules> hint on the nudge channel), through a real redis-server, each instance on
// its own connections as two processes would be. A small one's hint starts nothing anywhere.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { KEEP_WARM_RULES, ROUTING_NUDGE_CHANNEL } from '@vms/routing';
import type { RoutingWiring } from './routing-wiring.ts';
import { routingInstancesOverRedis } from './routing-instances.fixture.ts';

describe('build threads warmed across instances while a large version is published', () => {
  const instances = routingInstancesOverRedis();
  const instance = (name: string): Promise<RoutingWiring> => instances.open(name);

  it('the publishing instance and the one that hears the hint start and warm their thread; a small table starts none', async () => {
    const a = await instance('a');
    const b = await instance('b');
    // both subscribers' SUBSCRIBE are in
    await waitFor(async () => Number(((await instances.clients[0]!.call('PUBSUB', 'NUMSUB', ROUTING_NUDGE_CHANNEL)) as [string, number])[1]) === 2);
    a.prepareBuild(KEEP_WARM_RULES - 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual([a.builder.threads, b.builder.threads], [0, 0], 'a small table: no thread');
    a.prepareBuild(KEEP_WARM_RULES);
    assert.equal(a.builder.threads, 1, 'this instance at once');
    await waitFor(() => b.builder.threads === 1, { timeoutMs: 10_000 });
    const [wa, wb] = await Promise.all([a.builder.warm(), b.builder.warm()]);
    assert.ok(wa !== undefined && wb !== undefined, 'both warmed up');
    assert.ok(a.builder.lastWarm !== undefined && b.builder.lastWarm !== undefined);
  });
});
