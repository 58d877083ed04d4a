// The pure overload controller of REGISTER (issue 11): when it sheds, how much, how it recovers, and
// the two parsers its signals need (the receive queue from /proc/net/udp, the From user).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readReceiveQueue } from '../src/overload/receive-queue.ts';
import { ReturnCalendar } from '../src/overload/return-calendar.ts';
import { CALM_ARRIVALS, DEFAULT_SHED_POLICY, FAR_BEHIND, fromUser, MIN_ADMITTED_PER_SEC, nextQueueReadAt, QUEUE_READ_BUDGET, QUEUE_READ_MAX_SOCKETS, queueSampleNeeded, receiveBufferStep, RegisterShedder, RETURN_JITTER_SEC, SHED_WINDOW_MS, udpReceiveQueueBytes, udpSocketsInUse, type ShedSample } from '../src/overload/register-shedding.ts';

const calm: ShedSample = { queueBytes: 0, utilization: 0.2, pending: 0, arrivals: 100 };
/** Over the high mark, under FAR_BEHIND × it (which sheds at the cap at once). */
const behind: ShedSample = { queueBytes: 2 * DEFAULT_SHED_POLICY.highQueueBytes, utilization: 1, pending: 0, arrivals: 100 };
/** The shed fraction after `n` overloaded windows from none: the admitted share cut by `cut` each time. */
const afterCuts = (n: number): number => 1 - DEFAULT_SHED_POLICY.cut ** n;
const near = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9;

describe('register shedding controller', () => {
  it('sheds nothing while the receive queue stays under its mark', () => {
    const s = new RegisterShedder();
    for (let i = 0; i < 50; i++) s.observe(calm);
    s.observe({ ...calm, queueBytes: DEFAULT_SHED_POLICY.highQueueBytes }); // at the mark, not over
    assert.equal(s.fraction, 0);
    assert.equal(s.shouldShed(0), false);
  });

  it('cuts the admitted share while the queue is over its mark, capped so some new devices always get through', () => {
    const s = new RegisterShedder();
    s.observe(behind);
    assert.ok(near(s.fraction, afterCuts(1)), `one window: ${s.fraction}`);
    s.observe(behind);
    assert.ok(near(s.fraction, afterCuts(2)), `two windows: ${s.fraction}`);
    for (let i = 0; i < 20; i++) s.observe(behind);
    assert.equal(s.fraction, DEFAULT_SHED_POLICY.maxFraction);
    assert.equal(s.shouldShed(0.5), true);
    assert.equal(s.shouldShed(0.995), false, 'random over the fraction: admitted');
    assert.equal(s.shed, 1);
  });

  it('at the cap, what gets through no longer grows with the storm: 1 % by default (the 90 % cap let 10 % through)', () => {
    // issue 11: a storm at 1,500/s on an instance that finishes ~150 registrations a second; the cap
    // decides how much of it is committed work (a challenge, then a registration that is never shed)
    const s = new RegisterShedder();
    for (let i = 0; i < 10; i++) s.observe(behind);
    let admitted = 0;
    for (let i = 0; i < 1500; i++) if (!s.shouldShed((i + 0.5) / 1500)) admitted++;
    assert.ok(admitted <= 15, `admitted of 1,500: ${admitted}`);
    assert.ok(admitted > 0, 'some always get through');
  });

  it('a queue far over its mark (seconds of work) sheds at the cap in its first window', () => {
    const s = new RegisterShedder();
    s.observe({ ...behind, queueBytes: FAR_BEHIND * DEFAULT_SHED_POLICY.highQueueBytes + 1 });
    assert.equal(s.fraction, DEFAULT_SHED_POLICY.maxFraction);
  });

  it('holds between the marks, falls slowly under the low one', () => {
    const s = new RegisterShedder();
    for (let i = 0; i < 4; i++) s.observe(behind);
    const top = s.fraction;
    s.observe({ ...calm, queueBytes: (DEFAULT_SHED_POLICY.lowQueueBytes + DEFAULT_SHED_POLICY.highQueueBytes) / 2 });
    assert.equal(s.fraction, top, 'between low and high: hold');
    s.observe(calm);
    assert.ok(near(s.fraction, top - DEFAULT_SHED_POLICY.fall));
    for (let i = 0; i < 100; i++) s.observe(calm);
    assert.equal(s.fraction, 0);
  });

  it('a full queue without REGISTERs is not a registration storm (start-up, a keepalive burst): no rise, recovery', () => {
    const s = new RegisterShedder();
    s.observe({ ...behind, arrivals: 0 });
    assert.equal(s.fraction, 0);
    s.observe(behind);
    s.observe({ ...behind, arrivals: 0 });
    assert.ok(s.fraction < afterCuts(1));
  });

  it('too many registrations in flight (a slow store or Redis) sheds even with an empty queue', () => {
    const s = new RegisterShedder();
    s.observe({ ...calm, pending: DEFAULT_SHED_POLICY.maxPending + 1 });
    assert.ok(near(s.fraction, afterCuts(1)));
    s.observe({ ...calm, pending: DEFAULT_SHED_POLICY.maxPending + 1 });
    assert.ok(near(s.fraction, afterCuts(2)));
  });

  it('without a readable queue, event-loop utilization decides', () => {
    const s = new RegisterShedder();
    s.observe({ queueBytes: null, utilization: 0.95, pending: 0, arrivals: 10 });
    assert.ok(near(s.fraction, afterCuts(1)));
    s.observe({ queueBytes: null, utilization: 0.8, pending: 0, arrivals: 10 });
    assert.ok(near(s.fraction, afterCuts(1)), 'between the marks: hold');
    s.observe({ queueBytes: null, utilization: 0.5, pending: 0, arrivals: 10 });
    assert.ok(s.fraction < afterCuts(1));
  });

  it('the receive buffer shrinks at the cap and is restored only once shedding has stopped', () => {
    const s = new RegisterShedder();
    let shrunk = false;
    const step = (sample: ShedSample): string => {
      s.observe(sample);
      const d = receiveBufferStep(s, shrunk);
      if (d !== 'keep') shrunk = d === 'shrink';
      return d;
    };
    assert.equal(step(behind), 'keep', 'shedding, not yet at the cap');
    assert.equal(step({ ...behind, queueBytes: FAR_BEHIND * DEFAULT_SHED_POLICY.highQueueBytes + 1 }), 'shrink');
    assert.equal(step(behind), 'keep');
    assert.equal(step(calm), 'keep', 'off the cap but still shedding: a storm still arriving would fill the big buffer in one window');
    let restored = 0;
    for (let i = 0; i < 20; i++) if (step(calm) === 'restore') restored++;
    assert.equal(restored, 1);
    assert.equal(s.fraction, 0);
  });

  it('Retry-After spreads retries over [min, min + spread] seconds while the calendar has room there', () => {
    const s = new RegisterShedder();
    const p = DEFAULT_SHED_POLICY;
    assert.equal(s.retryAfterSec(0), p.retryAfterMinSec);
    assert.equal(s.retryAfterSec(0.999999), p.retryAfterMinSec + p.retryAfterSpreadSec);
    // a few devices shed (under the floor's room a second): the ordinary spread, whatever the random
    const random = lcg(7);
    for (let i = 0; i < 100; i++) {
      const wait = s.retryAfterSec(random());
      assert.ok(wait >= p.retryAfterMinSec && wait <= p.retryAfterMinSec + p.retryAfterSpreadSec, `${wait}`);
    }
    assert.equal(s.returnsBooked, 102);
  });
});

/** A deterministic random in [0, 1) (a 32-bit LCG), so a failure repeats. */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** Queue between the marks: the shed fraction holds. */
const holding: ShedSample = { ...calm, queueBytes: (DEFAULT_SHED_POLICY.lowQueueBytes + DEFAULT_SHED_POLICY.highQueueBytes) / 2 };

/** A shedder that has been shedding for `seconds` while letting `perSec` first REGISTERs through a second. */
function admitting(perSec: number, seconds = 5): RegisterShedder {
  const s = new RegisterShedder();
  // the window that crosses the mark: all its arrivals admitted (calm until then), at the same rate
  s.observe({ ...behind, arrivals: perSec / 10 });
  for (let w = 0; w < seconds * 10; w++) {
    for (let i = 0; i < perSec / 10; i++) assert.equal(s.shouldShed(0.999), false);
    s.observe(holding);
  }
  return s;
}

describe('register shedding: Retry-After sized by the backlog (the return calendar)', () => {
  const p = DEFAULT_SHED_POLICY;

  it('measures the first REGISTERs admitted per second, smoothed, from a floor; the episode keeps its peak', () => {
    assert.equal(new RegisterShedder().admittedPerSec, MIN_ADMITTED_PER_SEC);
    const s = admitting(100);
    assert.ok(Math.abs(s.admittedPerSec - 100) <= 1, `${s.admittedPerSec}`);
    // windows of another length (the sampler measures them): 40 in 200 ms is 200/s
    for (let w = 0; w < 50; w++) {
      for (let i = 0; i < 40; i++) s.shouldShed(0.999);
      s.observe({ ...holding, windowMs: 200 });
    }
    assert.ok(Math.abs(s.admittedPerSec - 200) <= 2, `${s.admittedPerSec}`);
    // still shedding and admitting none of the arrivals: the peak of the episode holds (what the instance took)
    for (let w = 0; w < 100; w++) s.observe(holding);
    assert.ok(s.fraction > 0);
    assert.ok(Math.abs(s.admittedPerSec - 200) <= 2, `${s.admittedPerSec}`);
  });

  it('calm again, the estimate follows the rate down: a stalled instance falls to the floor, not to 0', () => {
    const s = admitting(200);
    while (s.fraction > 0) s.observe({ ...calm, arrivals: 0 });
    for (let w = 0; w < 100; w++) s.observe({ ...calm, arrivals: 0 });
    assert.equal(s.admittedPerSec, MIN_ADMITTED_PER_SEC);
  });

  it('at the cap (the cap\'s 1 % of arrivals) the estimate keeps the peak the storm\'s start measured', () => {
    const s = new RegisterShedder();
    // a storm of 1,500/s: the window that crosses the mark admitted all 150, then the cut, then the cap
    s.observe({ ...behind, arrivals: 150 });
    for (let i = 0; i < 38; i++) s.shouldShed(0.999);
    const far: ShedSample = { ...behind, arrivals: 150, queueBytes: FAR_BEHIND * p.highQueueBytes + 1 };
    s.observe(far);
    assert.ok(s.atCap);
    const peak = s.admittedPerSec;
    assert.ok(peak > 100, `peak ${peak}`);
    for (let w = 0; w < 300; w++) {
      s.shouldShed(0.9999);
      s.observe(far);
    }
    assert.equal(s.admittedPerSec, peak, 'held through 30 s at the cap');
  });

  it('10,000 devices shed while admitting 100/s: no second gets more than that, the last told ~100 s, not 600', () => {
    const s = admitting(100);
    const room = s.admittedPerSec;
    const random = lcg(1);
    const due = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const wait = s.retryAfterSec(random());
      due.set(wait, (due.get(wait) ?? 0) + 1);
    }
    const waits = [...due.keys()];
    for (const [wait, n] of due) assert.ok(n <= room, `${n} due at ${wait} s, room ${room}`);
    assert.equal(Math.min(...waits), p.retryAfterMinSec);
    const last = Math.max(...waits);
    // 10,000 / 100 seconds of room from the minimum on, a few more for the jitter's gaps
    assert.ok(last >= p.retryAfterMinSec + Math.floor(10_000 / room) - 1, `last ${last}`);
    assert.ok(last <= p.retryAfterMinSec + 10_000 / room + RETURN_JITTER_SEC + 2, `last ${last}`);
    assert.equal(s.returnsBooked, 10_000);
  });

  it('a storm shed over 20 s comes back no faster than the rate admitted, each second counted on the clock', () => {
    const s = admitting(100);
    const random = lcg(2);
    const returns = new Map<number, number>();
    let clockMs = 5_100; // admitting(): the first observe and 50 windows
    for (let w = 0; w < 200; w++) {
      for (let i = 0; i < 10; i++) s.shouldShed(0.999);
      for (let i = 0; i < 50; i++) {
        assert.equal(s.shouldShed(0), true);
        const back = Math.floor(clockMs / 1000) + s.retryAfterSec(random());
        returns.set(back, (returns.get(back) ?? 0) + 1);
      }
      s.observe(holding);
      clockMs += SHED_WINDOW_MS;
    }
    for (const [second, n] of returns) assert.ok(n <= 101, `${n} back at second ${second}`);
    const last = Math.max(...returns.keys());
    assert.ok(last <= 5 + p.retryAfterMinSec + 10_000 / 100 + RETURN_JITTER_SEC + 2, `last back at ${last} s`);
  });

  it('Retry-After is never under the minimum nor over min + retryAfterMaxSpreadSec; every second full: spread over all of it', () => {
    const s = new RegisterShedder(); // the floor's room: 10 a second
    const horizon = p.retryAfterMinSec + p.retryAfterMaxSpreadSec;
    const random = lcg(3);
    const seen = new Set<number>();
    for (let i = 0; i < (horizon + 1) * MIN_ADMITTED_PER_SEC + 20_000; i++) {
      const wait = s.retryAfterSec(random());
      assert.ok(wait >= p.retryAfterMinSec && wait <= horizon, `${wait}`);
      seen.add(wait);
    }
    assert.equal(seen.size, p.retryAfterMaxSpreadSec + 1, 'every second from min to the horizon');
    assert.equal(s.retryAfterSec(0), p.retryAfterMinSec);
    assert.equal(s.retryAfterSec(0.999999), horizon);
    assert.equal(s.retryAfterSec(0.5), p.retryAfterMinSec + Math.floor(0.5 * (p.retryAfterMaxSpreadSec + 1)));
  });

  it('seconds gone by are emptied: the calendar is the next min + max seconds, never more', () => {
    const s = admitting(100);
    for (let i = 0; i < 30_000; i++) s.retryAfterSec(i / 30_000);
    assert.equal(s.returnsBooked, 30_000);
    for (let w = 0; w < 10 * (p.retryAfterMinSec + p.retryAfterMaxSpreadSec + 1); w++) s.observe(calm);
    assert.equal(s.returnsBooked, 0);
    assert.equal(s.fraction, 0);
    // calm again: the ordinary spread
    assert.equal(s.retryAfterSec(0.999999), p.retryAfterMinSec + p.retryAfterSpreadSec);
  });
});

describe('return calendar', () => {
  it('counts bookings per second in a ring of horizon + 1 buckets, reused as time passes', () => {
    const c = new ReturnCalendar(10);
    assert.equal(c.horizonSec, 10);
    c.book(0);
    c.book(3);
    c.book(3);
    c.book(99); // clamped to the horizon
    assert.deepEqual([c.dueAt(0), c.dueAt(3), c.dueAt(10), c.dueAt(11), c.total], [1, 2, 1, 0, 4]);
    c.advanceTo(2.5);
    assert.deepEqual([c.dueAt(1), c.dueAt(8), c.total], [2, 1, 3]);
    assert.equal(c.dueAt(9), 0, 'the slot of second 0, reused for second 11, starts empty');
    c.advanceTo(1); // never back
    assert.equal(c.dueAt(1), 2);
    c.advanceTo(1_000);
    assert.equal(c.total, 0);
  });

  it('finds the earliest second with room, after the ones it found full', () => {
    const c = new ReturnCalendar(5);
    for (let i = 0; i < 3; i++) c.book(1);
    c.book(2);
    assert.equal(c.firstWithRoom(1, 5, 1), 3);
    assert.equal(c.firstWithRoom(0, 5, 1), 3, 'the cursor: seconds found full are not searched again');
    assert.equal(c.firstWithRoom(1, 5, 2), 2, 'more room: searched again from the start');
    for (let i = 3; i <= 5; i++) c.book(i);
    assert.equal(c.firstWithRoom(1, 5, 1), undefined);
    c.advanceTo(1);
    assert.equal(c.firstWithRoom(1, 5, 1), 5, 'a new second at the far end');
  });
});

describe('shedding signals', () => {
  // proc(5) /proc/net/udp: two sockets; the one on port 0x3E7F (15999) has 0x2A00 bytes queued
  const table = [
    '   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops',
    ' 6989: 0100007F:3E7F 00000000:0000 07 00000000:00002A00 00:00000000 00000000     0        0 825986 2 00000000413e6fc2 0',
    ' 7001: 0100007F:13C4 00000000:0000 07 00000000:00000100 00:00000000 00000000     0        0 825999 2 00000000413e6fc3 0',
  ].join('\n');

  it('reads the receive queue of the socket on a port, null when no socket has it', () => {
    assert.equal(udpReceiveQueueBytes(table, 0x3e7f), 0x2a00);
    assert.equal(udpReceiveQueueBytes(table, 5060), 0x100);
    assert.equal(udpReceiveQueueBytes(table, 5061), null);
    assert.equal(udpReceiveQueueBytes('', 5060), null);
    // a socket connected to port 5060 elsewhere (5060 as its remote port) is not ours; two of ours add up
    const more = `${table}\n 7002: 0100007F:9C40 0100007F:13C4 01 00000000:00000300 00:00000000 00000000     0        0 826000 2 00000000413e6fc4 0` +
      `\n 7003: 00000000:13C4 00000000:0000 07 00000000:00000020 00:00000000 00000000     0        0 826001 2 00000000413e6fc5 0`;
    assert.equal(udpReceiveQueueBytes(more, 5060), 0x120);
    assert.equal(udpReceiveQueueBytes(more, 40000), 0x300);
  });

  it('counts the UDP sockets of the namespace from sockstat and sockstat6', () => {
    const v4 = 'sockets: used 8\nTCP: inuse 1 orphan 0 tw 81 alloc 1 mem 95\nUDP: inuse 300017 mem 222\nUDPLITE: inuse 0\nRAW: inuse 0\n';
    const v6 = 'TCP6: inuse 0\nUDP6: inuse 3\nUDPLITE6: inuse 0\n';
    assert.equal(udpSocketsInUse(v4), 300_017);
    assert.equal(udpSocketsInUse(v6), 3);
    assert.equal(udpSocketsInUse(v4 + v6), 300_020);
    assert.equal(udpSocketsInUse('TCP: inuse 1\nUDPLITE: inuse 4\n'), null); // UDP-Lite is not UDP
    assert.equal(udpSocketsInUse(''), null);
  });

  it('does not read /proc/net/udp in a namespace with more UDP sockets than QUEUE_READ_MAX_SOCKETS', () => {
    const files = (udp: number): Record<string, string> => ({
      '/proc/net/sockstat': `sockets: used 9\nUDP: inuse ${udp} mem 12\n`,
      '/proc/net/sockstat6': 'UDP6: inuse 1\n',
      '/proc/net/udp': table,
    });
    const reader = (fs: Record<string, string>, read: string[]) => (file: string): string => {
      read.push(file);
      const text = fs[file];
      if (text === undefined) throw new Error(`ENOENT ${file}`);
      return text;
    };
    const crowdedBy: number[] = [];
    const readFew: string[] = [];
    assert.equal(readReceiveQueue(0x3e7f, (n) => crowdedBy.push(n), reader(files(QUEUE_READ_MAX_SOCKETS - 1), readFew)), 0x2a00);
    assert.deepEqual(readFew, ['/proc/net/sockstat', '/proc/net/sockstat6', '/proc/net/udp', '/proc/net/udp6']);
    assert.equal(crowdedBy.length, 0);
    const readMany: string[] = [];
    assert.equal(readReceiveQueue(0x3e7f, (n) => crowdedBy.push(n), reader(files(QUEUE_READ_MAX_SOCKETS), readMany)), null);
    assert.deepEqual(readMany, ['/proc/net/sockstat', '/proc/net/sockstat6']);
    assert.deepEqual(crowdedBy, [QUEUE_READ_MAX_SOCKETS + 1]);
    // sockstat unreadable (not Linux): the table is tried as before
    assert.equal(readReceiveQueue(0x3e7f, undefined, reader({ '/proc/net/udp': table }, [])), 0x2a00);
  });

  it('takes the device id from a raw From value', () => {
    assert.equal(fromUser('<sip:34020000001320000001@3402000000>;tag=1'), '34020000001320000001');
    assert.equal(fromUser('"cam" <sip:34020000001320000002@3402000000>'), '34020000001320000002');
    assert.equal(fromUser('sip:34020000001320000003@10.0.0.1;tag=x'), '34020000001320000003');
    assert.equal(fromUser('<sip:3402000000>'), undefined);
  });
});

describe('register shedding: when the sampler reads the receive queue', () => {
  const quiet = { utilization: 0.3, pending: 2, arrivals: 3 };
  it('skips the /proc read in a calm window: nothing shed, few arrivals, the loop idle part of the window', () => {
    assert.equal(queueSampleNeeded(new RegisterShedder(), quiet), false);
    assert.equal(queueSampleNeeded(new RegisterShedder(), { ...quiet, arrivals: CALM_ARRIVALS }), false);
  });

  it('reads it whenever any signal could mean a backlog', () => {
    const idle = new RegisterShedder();
    assert.equal(queueSampleNeeded(idle, { ...quiet, arrivals: CALM_ARRIVALS + 1 }), true, 'many arrivals');
    assert.equal(queueSampleNeeded(idle, { ...quiet, utilization: DEFAULT_SHED_POLICY.lowUtilization }), true, 'loop busy (at the low mark)');
    assert.equal(queueSampleNeeded(idle, { ...quiet, utilization: Number.NaN }), true, 'utilization unknown');
    assert.equal(queueSampleNeeded(idle, { ...quiet, pending: DEFAULT_SHED_POLICY.maxPending + 1 }), true, 'registrations piling up');
    const shedding = new RegisterShedder();
    shedding.observe(behind);
    assert.ok(shedding.fraction > 0);
    assert.equal(queueSampleNeeded(shedding, quiet), true, 'while shedding the queue decides how fast it falls');
  });

  it('a calm window observed without the queue leaves the shedder as a queue under its low mark does', () => {
    const without = new RegisterShedder();
    const withQueue = new RegisterShedder();
    for (let i = 0; i < 5; i++) {
      without.observe({ ...quiet, queueBytes: null });
      withQueue.observe({ ...quiet, queueBytes: DEFAULT_SHED_POLICY.lowQueueBytes - 1 });
    }
    assert.deepEqual([without.fraction, without.admittedPerSec, without.atCap], [withQueue.fraction, withQueue.admittedPerSec, withQueue.atCap]);
    assert.equal(without.fraction, 0);
  });
});

describe('register shedding: the receive-queue read is cost-bounded', () => {
  it('nextQueueReadAt: an ordinary read (~0.05 ms) allows the next window; a slow one (a host with 54,000 UDP sockets) waits 1 / budget times its cost', () => {
    assert.equal(QUEUE_READ_BUDGET, 0.02);
    assert.ok(nextQueueReadAt(1000, 0.05) < 1000 + 100, 'every 100 ms window on an ordinary host');
    assert.equal(nextQueueReadAt(1000, 20), 2000);
    assert.equal(nextQueueReadAt(0, 3, 0.1), 30);
  });

});
