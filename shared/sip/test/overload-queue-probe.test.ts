// The queueing delay of the SIP socket, probed (overload/queue-probe.ts): the reading's arithmetic with
// time injected, the shedder deciding by it where the queue's bytes are unknown, the sampler asking it
// there, and a real SipTransport whose event loop is held while a probe waits in its socket.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROBE_FRESH_MS, PROBE_LOST_MS, QueueDelayReading } from '../src/overload/queue-probe.ts';
import { DEFAULT_SHED_POLICY, FAR_BEHIND, RegisterShedder } from '../src/overload/register-shedding.ts';
import { SipTransport } from '../src/transport/transport.ts';

describe('QueueDelayReading', () => {
  it('one probe in flight: its send to its read is the delay, fresh for a while', () => {
    const r = new QueueDelayReading();
    assert.equal(r.delayAt(0), null);
    assert.equal(r.next(0), 1);
    assert.equal(r.next(10), null, 'one in flight at a time');
    r.arrived(1, 12);
    assert.equal(r.delayAt(12), 12);
    assert.equal(r.delayAt(12 + PROBE_FRESH_MS), 12);
    assert.equal(r.delayAt(13 + PROBE_FRESH_MS), null, 'too old to say anything of now');
  });

  it('a read stalled now shows before its probe comes back: the age of the one in flight', () => {
    const r = new QueueDelayReading();
    r.next(0);
    r.arrived(1, 3);
    r.next(100);
    assert.equal(r.delayAt(150), 50);
    assert.equal(r.delayAt(101), 3, 'the last delay while the age is shorter');
  });

  it('a probe lost (dropped from a full queue) reads as its age, and another is sent; the late one is not taken for it', () => {
    const r = new QueueDelayReading();
    r.next(0);
    assert.equal(r.next(PROBE_LOST_MS - 1), null);
    assert.equal(r.next(PROBE_LOST_MS), 2, 'a second probe, numbered apart');
    assert.equal(r.delayAt(PROBE_LOST_MS), PROBE_LOST_MS);
    r.arrived(1, PROBE_LOST_MS + 5); // the first one, late
    assert.equal(r.delayAt(PROBE_LOST_MS + 5), PROBE_LOST_MS, 'not a 5 ms delay');
    r.arrived(2, PROBE_LOST_MS + 20);
    assert.equal(r.delayAt(PROBE_LOST_MS + 20), 20);
  });
});

describe('the shedder decides by the probed delay where the queue bytes are unknown', () => {
  const window = { queueBytes: null, utilization: 1, pending: 0, arrivals: 100 } as const;

  it('a busy loop with a short delay is not overloaded; a long delay is', () => {
    const s = new RegisterShedder();
    for (let i = 0; i < 10; i++) s.observe({ ...window, queueDelayMs: 5 });
    assert.equal(s.fraction, 0, 'utilization 1 alone decided this before');
    s.observe({ ...window, queueDelayMs: DEFAULT_SHED_POLICY.highQueueDelayMs + 1 });
    assert.ok(s.fraction > 0 && s.fraction < DEFAULT_SHED_POLICY.maxFraction);
    s.observe({ ...window, queueDelayMs: FAR_BEHIND * DEFAULT_SHED_POLICY.highQueueDelayMs + 1 });
    assert.equal(s.fraction, DEFAULT_SHED_POLICY.maxFraction, 'far behind: at the cap at once');
    s.observe({ ...window, queueDelayMs: (DEFAULT_SHED_POLICY.lowQueueDelayMs + DEFAULT_SHED_POLICY.highQueueDelayMs) / 2 });
    assert.equal(s.fraction, DEFAULT_SHED_POLICY.maxFraction, 'between the marks it holds');
    s.observe({ ...window, queueDelayMs: 1 });
    assert.ok(s.fraction < DEFAULT_SHED_POLICY.maxFraction);
  });

  it('the bytes win where both are known; utilization decides where neither is', () => {
    const s = new RegisterShedder();
    s.observe({ ...window, queueBytes: 0, queueDelayMs: 10_000 });
    assert.equal(s.fraction, 0);
    s.observe({ ...window, queueDelayMs: null });
    assert.ok(s.fraction > 0);
  });
});

describe('a SipTransport probing its own UDP socket', () => {
  it('reads a few ms on an idle loop, and the time the loop was held when a probe waited behind it', async () => {
    const t = await SipTransport.listen({ host: '127.0.0.1', port: 0, transports: ['udp'] });
    try {
      const probe = await t.openQueueProbe();
      assert.ok(probe !== null);
      const idle = probe.sample();
      assert.ok(idle !== null && idle < 50, `idle: ${idle} ms`);
      // let that reading age out, then send one and hold the loop 200 ms before it can be read
      await new Promise((r) => setTimeout(r, PROBE_FRESH_MS + 50));
      probe.sample();
      for (const until = performance.now() + 200; performance.now() < until; );
      await new Promise((r) => setTimeout(r, 20));
      const held = probe.sample();
      assert.ok(held !== null && held >= 190, `held: ${held} ms`);
    } finally {
      await t.close();
    }
  });
});

describe('the sampler asks the probe where the bytes cannot be read', () => {
  it('a crowded namespace (bytes unknown): a short delay does not shed a busy loop, a long one does', async () => {
    const { createShedSampler } = await import('../src/overload/shed-sampler.ts');
    const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => silent };
    let delay: number | null = 5;
    let asked = 0;
    const sampler = createShedSampler({
      log: silent,
      sipPort: 5060,
      readReceiveQueue: () => null,
      queueDelay: () => {
        asked++;
        return delay;
      },
      utilization: () => 1,
    });
    const arrivals = setInterval(() => sampler.arrived(), 5);
    try {
      await new Promise((r) => setTimeout(r, 450));
      assert.ok(asked > 0);
      assert.equal(sampler.shedder.fraction, 0, 'utilization 1 shed here before the probe');
      delay = 2 * DEFAULT_SHED_POLICY.highQueueDelayMs;
      for (const until = Date.now() + 2000; sampler.shedder.fraction === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      assert.ok(sampler.shedder.fraction > 0);
    } finally {
      clearInterval(arrivals);
      sampler.close();
    }
  });
});
