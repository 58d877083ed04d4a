// The edge's TCP links to shards (shard-links.ts) against a scripted transport and a FakeClock: pinning,
// the queue while connecting, the bound (503), reconnect with backoff, a lost connection re-dialled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/clock';
import { silentLogger, SipHeaders, type Flow, type SipMessage } from '@vms/sip';
import { ShardLinks, type LinkTransport } from '../src/shard-links.ts';

const msg = (n: number): SipMessage => ({ type: 'response', status: 200, reason: String(n), headers: new SipHeaders(), body: Buffer.alloc(0) });

/** A transport whose connects the test settles by hand; writes recorded per connection. */
class Scripted implements LinkTransport {
  nextId = 1;
  readonly dials: { host: string; port: number; resolve: (ok: boolean) => void }[] = [];
  readonly closers = new Map<number, (reason: string) => void>();
  readonly written: { id: number; reason: string }[] = [];
  open(host: string, port: number, onClose: (reason: string) => void): Promise<Flow> {
    return new Promise((resolve, reject) => {
      this.dials.push({
        host,
        port,
        resolve: (ok) => {
          if (!ok) return reject(new Error('ECONNREFUSED'));
          const id = this.nextId++;
          this.closers.set(id, onClose);
          resolve({ transport: 'tcp', remoteAddress: host, remotePort: port, localAddress: '127.0.0.1', localPort: 40000 + id, connectionId: id });
        },
      });
    });
  }
  write(flow: Flow, m: SipMessage): Promise<void> {
    this.written.push({ id: flow.connectionId ?? 0, reason: m.type === 'response' ? m.reason : '' });
    return Promise.resolve();
  }
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('ShardLinks', () => {
  it('queues while connecting and sends in order once connected; one pin always on one connection', async () => {
    const t = new Scripted();
    const links = new ShardLinks(t, { connections: 2, wanted: () => true, clock: new FakeClock(), log: silentLogger });
    assert.equal(links.send('10.0.0.1', 5061, 'dev-a', msg(1)), true);
    assert.equal(links.send('10.0.0.1', 5061, 'dev-a', msg(2)), true);
    assert.equal(t.dials.length, 1, 'one connect for the slot, not one per message');
    t.dials[0]!.resolve(true);
    await tick();
    assert.deepEqual(t.written, [{ id: 1, reason: '1' }, { id: 1, reason: '2' }]);
    for (let i = 3; i < 8; i++) links.send('10.0.0.1', 5061, 'dev-a', msg(i));
    assert.ok(t.written.every((w) => w.id === 1), 'pinned');
    // another pin may land on the other slot: at most `connections` connections per shard
    for (let i = 0; i < 20; i++) links.send('10.0.0.1', 5061, `dev-${i}`, msg(100 + i));
    assert.ok(t.dials.length <= 2);
    links.close();
  });

  it('past the bound (queued + being written) send() says no: the edge answers 503', () => {
    const t = new Scripted();
    const links = new ShardLinks(t, { connections: 1, maxQueued: 3, wanted: () => true, clock: new FakeClock(), log: silentLogger });
    assert.deepEqual([1, 2, 3, 4].map((i) => links.send('10.0.0.1', 5061, 'd', msg(i))), [true, true, true, false]);
    assert.equal(links.stats().refused, 1);
    links.close();
    assert.equal(links.stats().dropped, 3, 'what waited is dropped on close');
  });

  it('a failed connect drops what waited and retries with doubling backoff up to the cap, while the shard is wanted', async () => {
    const t = new Scripted();
    const clock = new FakeClock();
    let wanted = true;
    const links = new ShardLinks(t, { connections: 1, backoffMinMs: 100, backoffMaxMs: 400, wanted: () => wanted, clock, log: silentLogger });
    links.send('10.0.0.1', 5061, 'd', msg(1));
    const delays: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      t.dials.at(-1)!.resolve(false);
      await tick();
      const before = t.dials.length;
      let waited = 0;
      while (t.dials.length === before && waited < 1000) {
        clock.advance(50);
        waited += 50;
      }
      delays.push(waited);
    }
    assert.deepEqual(delays, [100, 200, 400, 400]);
    assert.equal(links.stats().dropped, 1);
    // a message while backing off waits for the next attempt
    t.dials.at(-1)!.resolve(false);
    await tick();
    links.send('10.0.0.1', 5061, 'd', msg(2));
    wanted = false;
    clock.advance(400);
    assert.equal(t.dials.length, 6, 'someone waits: dialled although not wanted');
    t.dials.at(-1)!.resolve(true);
    await tick();
    assert.deepEqual(t.written.map((w) => w.reason), ['2']);
    links.close();
  });

  it('a connection lost (shard restarted) is dialled again at once when wanted; an idle-closed one waits for traffic', async () => {
    const t = new Scripted();
    const links = new ShardLinks(t, { connections: 1, wanted: () => true, clock: new FakeClock(), log: silentLogger });
    links.send('10.0.0.1', 5061, 'd', msg(1));
    t.dials[0]!.resolve(true);
    await tick();
    t.closers.get(1)!('closed');
    assert.equal(t.dials.length, 2, 'reconnecting');
    t.dials[1]!.resolve(true);
    await tick();
    links.send('10.0.0.1', 5061, 'd', msg(2));
    assert.deepEqual(t.written.at(-1), { id: 2, reason: '2' });
    assert.deepEqual(links.openFlows('10.0.0.1', 5061).map((f) => f.connectionId), [2]);
    t.closers.get(2)!('idle-timeout');
    assert.equal(t.dials.length, 2, 'not re-dialled for nothing');
    links.send('10.0.0.1', 5061, 'd', msg(3));
    assert.equal(t.dials.length, 3);
    links.close();
  });
});
