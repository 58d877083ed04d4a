// The sampling loop of the REGISTER shedder (overload/shed-sampler.ts) with its signals injected: it
// sheds only in windows with REGISTERs and a queue over the mark, shrinks the receive buffer at the cap
// and restores it once shedding stops, and logs entering and leaving shedding once each, not per window.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createShedSampler, readCostMs } from '../src/overload/shed-sampler.ts';
import { DEFAULT_SHED_POLICY, FAR_BEHIND } from '../src/overload/register-shedding.ts';
import type { SipLogger } from '../src/transport/logger.ts';

function recordingLogger(lines: string[]): SipLogger {
  const log: SipLogger = {
    debug: () => {},
    info: (_o, msg) => lines.push(`info ${msg}`),
    warn: (_o, msg) => lines.push(`warn ${msg}`),
    error: (_o, msg) => lines.push(`error ${msg}`),
    child: () => log,
  };
  return log;
}

async function until(what: string, ok: () => boolean, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('shed sampler', () => {
  it('sheds while REGISTERs arrive over a full queue, shrinks the buffer at the cap, logs each transition once', async () => {
    const lines: string[] = [];
    const buffers: number[] = [];
    let queue = FAR_BEHIND * DEFAULT_SHED_POLICY.highQueueBytes + 1;
    const sampler = createShedSampler({
      log: recordingLogger(lines),
      sipPort: 5060,
      readReceiveQueue: () => queue,
      utilization: () => 1,
      setReceiveBuffer: (bytes) => buffers.push(bytes),
      receiveBufferBytes: 4 * 1024 * 1024,
    });
    try {
      await new Promise((r) => setTimeout(r, 250));
      assert.equal(sampler.shedder.fraction, 0, 'a full queue without REGISTERs is not a registration storm');
      assert.deepEqual(lines, []);
      sampler.arrived();
      await until('shedding', () => sampler.shedder.fraction > 0);
      assert.equal(sampler.shedder.fraction, DEFAULT_SHED_POLICY.maxFraction);
      assert.deepEqual(buffers, [DEFAULT_SHED_POLICY.sheddingReceiveBufferBytes]);
      // no more REGISTERs: the share falls 10 points a window, shedding for ~9 more windows, logged once
      queue = 0;
      await until('admitting again', () => sampler.shedder.fraction === 0, 5000);
      assert.deepEqual(buffers, [DEFAULT_SHED_POLICY.sheddingReceiveBufferBytes, 4 * 1024 * 1024]);
      assert.deepEqual(lines, ['warn overloaded: shedding new registrations with 503', 'info load back under the mark: registrations admitted again']);
      assert.ok(sampler.queueReads > 0);
    } finally {
      sampler.close();
    }
  });
});

describe('shed sampler: a window whose queue read waits for the budget', () => {
  /** A receive-queue read that takes `ms` (busy), so the next waits ms / QUEUE_READ_BUDGET (2 %: 50×). */
  const slowRead = (ms: number, bytes: () => number | null) => (): number | null => {
    for (const end = performance.now() + ms; performance.now() < end; );
    return bytes();
  };

  it('holds the shedder while the last reading is recent: a busy loop whose queue is empty does not shed', async () => {
    const lines: string[] = [];
    // a 4 ms read: the next one 200 ms later, so about every other window has no fresh reading
    const sampler = createShedSampler({ log: recordingLogger(lines), sipPort: 5060, readReceiveQueue: slowRead(4, () => 0), utilization: () => 1 });
    const arrivals = setInterval(() => sampler.arrived(), 5);
    try {
      await new Promise((r) => setTimeout(r, 900));
      assert.ok(sampler.queueReads >= 2 && sampler.queueReads <= 6, `reads paced by the budget (${sampler.queueReads} in ~9 windows)`);
      assert.equal(sampler.shedder.fraction, 0, 'utilization 1 alone is not overload while the queue reads empty');
      assert.deepEqual(lines, []);
    } finally {
      clearInterval(arrivals);
      sampler.close();
    }
  });

  it('sheds in those windows when the last reading was over the mark (held at its level), and by utilization where the queue cannot be read', async () => {
    const over = createShedSampler({ log: recordingLogger([]), sipPort: 5060, readReceiveQueue: slowRead(4, () => 2 * DEFAULT_SHED_POLICY.highQueueBytes), utilization: () => 1 });
    const unreadable = createShedSampler({ log: recordingLogger([]), sipPort: 5061, readReceiveQueue: () => null, utilization: () => 1 });
    const arrivals = setInterval(() => {
      over.arrived();
      unreadable.arrived();
    }, 5);
    try {
      await until('shedding over a full queue', () => over.shedder.fraction > 0);
      await until('shedding by utilization', () => unreadable.shedder.fraction > 0);
    } finally {
      clearInterval(arrivals);
      over.close();
      unreadable.close();
    }
  });
});

describe('shed sampler: what a read cost', () => {
  it('readCostMs: the wall time of a read that worked throughout, the CPU of one that was preempted', () => {
    assert.equal(readCostMs(0.05, { user: 40, system: 10 }), 0.05);
    assert.equal(readCostMs(25, { user: 80, system: 20 }), 0.1, 'descheduled for most of 25 ms: its cost is the 0.1 ms it ran');
  });

  it('a read that waited without working does not hold the next one back: every busy window has its reading', async () => {
    const shared = new Int32Array(new SharedArrayBuffer(4));
    // 20 ms asleep in the read (as when preempted): paced by wall time the next read would wait a second
    const sleepyRead = (): number => {
      Atomics.wait(shared, 0, 0, 20);
      return 0;
    };
    const sampler = createShedSampler({ log: recordingLogger([]), sipPort: 5060, readReceiveQueue: sleepyRead, utilization: () => 1 });
    const arrivals = setInterval(() => sampler.arrived(), 5);
    try {
      await new Promise((r) => setTimeout(r, 850));
      assert.ok(sampler.queueReads >= 5, `${sampler.queueReads} reads in ~8 windows`);
      assert.equal(sampler.shedder.fraction, 0, 'an empty queue read every window: a busy loop is not shed');
    } finally {
      clearInterval(arrivals);
      sampler.close();
    }
  });
});
