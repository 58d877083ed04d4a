// The pure overload controller of REGISTER (issue 11): when it sheds, how much, how it recovers, and
// the two parsers its signals need (the receive queue from /proc/net/udp, the From user).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readReceiveQueue } from '../src/overload/receive-queue.ts';
import { CALM_ARRIVALS, DEFAULT_SHED_POLICY, FAR_BEHIND, fromUser, nextQueueReadAt, QUEUE_READ_BUDGET, QUEUE_READ_MAX_SOCKETS, queueSampleNeeded, receiveBufferStep, RegisterShedder, udpReceiveQueueBytes, udpSocketsInUse, type ShedSample } from '../src/overload/register-shedding.ts';

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

  it('at the cap the Retry-After spread doubles each second up to its maximum, and is back to the ordinary one once shedding stops', () => {
    // issue 11: 100,000 devices told to come back within 25 s came back at 4,000/s, all the 503s the
    // instance could answer, and the registrations starved behind them
    const s = new RegisterShedder();
    const p = DEFAULT_SHED_POLICY;
    const far: ShedSample = { ...behind, queueBytes: FAR_BEHIND * p.highQueueBytes + 1 };
    for (let i = 0; i < 10; i++) s.observe(far);
    assert.ok(s.retryAfterSpreadSec >= 2 * p.retryAfterSpreadSec - 1 && s.retryAfterSpreadSec <= 2 * p.retryAfterSpreadSec, `after 1 s: ${s.retryAfterSpreadSec}`);
    for (let i = 0; i < 1000; i++) s.observe(far);
    assert.equal(s.retryAfterSpreadSec, p.retryAfterMaxSpreadSec);
    assert.equal(s.retryAfterSec(0.999999), p.retryAfterMinSec + p.retryAfterMaxSpreadSec);
    s.observe(behind);
    s.observe(calm);
    assert.equal(s.retryAfterSpreadSec, p.retryAfterMaxSpreadSec, 'still shedding: the devices shed are still coming back');
    for (let i = 0; i < 20; i++) s.observe(calm);
    assert.equal(s.fraction, 0);
    assert.equal(s.retryAfterSpreadSec, p.retryAfterSpreadSec);
  });

  it('Retry-After spreads retries over [min, min + spread] seconds', () => {
    const s = new RegisterShedder();
    const p = DEFAULT_SHED_POLICY;
    assert.equal(s.retryAfterSec(0), p.retryAfterMinSec);
    assert.equal(s.retryAfterSec(0.999999), p.retryAfterMinSec + p.retryAfterSpreadSec);
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
    assert.deepEqual([without.fraction, without.retryAfterSpreadSec, without.atCap], [withQueue.fraction, withQueue.retryAfterSpreadSec, withQueue.atCap]);
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
