// Feeds a RegisterShedder (register-shedding.ts) every SAMPLE_MS: the SIP UDP socket's receive queue
// (receive-queue.ts, its cost bounded by QUEUE_READ_BUDGET), event-loop utilization (perf_hooks), the
// REGISTERs counted by the caller, the handlers it has in flight and the time since the last window;
// shrinks the socket's receive buffer at the cap and restores it after; logs entering and leaving
// shedding (not each request).
// Shared by the signaling instances (register-admission.ts) and the SIP edge (overload.ts): what they
// do with the shedder's verdict is theirs.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { SipLogger } from '../transport/logger.ts';
import { readReceiveQueue } from './receive-queue.ts';
import { DEFAULT_SHED_POLICY, nextQueueReadAt, QUEUE_READ_MAX_SOCKETS, queueSampleNeeded, receiveBufferStep, RegisterShedder, SHED_WINDOW_MS, type ShedPolicy } from './register-shedding.ts';

/** Window of one utilization sample: short enough to react before the 500 ms retransmission timer. */
export const SAMPLE_MS = SHED_WINDOW_MS;

/**
 * A window whose receive-queue read waits for the budget (QUEUE_READ_BUDGET: the previous read was slow,
 * e.g. the process preempted during it) holds the shedder as it is while the last reading is this recent,
 * instead of deciding by utilization: a loop that keeps up with a high rate reads busy (0.9–1 at 4,000–
 * 5,000 registrations/s on the 2-core machine, its queue empty), and such windows shed thousands of first
 * REGISTERs that would have been answered in time (issue 11, the fleet bench's clean-rate steps).
 */
export const QUEUE_READING_FRESH_MS = 1000;

/** sampleQueue's answer for a window that holds (see QUEUE_READING_FRESH_MS). */
const HOLD = Symbol('hold');

export interface ShedSamplerOptions {
  readonly log: SipLogger;
  /** The SIP UDP port, whose receive queue is the main signal. */
  readonly sipPort: number;
  /** The SIP UDP socket's inode when the port is shared with other instances: only its queue is read (ownUdpSocketInode). */
  readonly sipSocketInode?: string | undefined;
  /** The shedder's marks; default DEFAULT_SHED_POLICY. */
  readonly policy?: ShedPolicy;
  /** Handlers in flight now (ShedSample.pending); default none. */
  readonly pending?: () => number;
  /** Resizes the SIP UDP socket's receive buffer: to the policy's shedding size at the cap, back to `receiveBufferBytes` after. */
  readonly setReceiveBuffer?: (bytes: number) => void;
  /** The socket's ordinary receive buffer, restored when shedding stops. */
  readonly receiveBufferBytes?: number;
  /** Reads the receive queue of the socket on a port (default: /proc/net/udp and udp6); for tests. */
  readonly readReceiveQueue?: (port: number) => number | null;
  /**
   * The SIP socket's queueing delay now, ms (QueueProbe.sample), asked in the windows that want the queue
   * and cannot read its bytes (a namespace crowded with UDP sockets): the shedder then decides by it
   * instead of by utilization. Absent: utilization decides there.
   */
  readonly queueDelay?: () => number | null;
  /** Event-loop utilization of the window since `last` (default perf_hooks); for tests. */
  readonly utilization?: () => number;
}

export interface ShedSampler {
  readonly shedder: RegisterShedder;
  /** One REGISTER the shedder may decide on (ShedSample.arrivals): a window without any does not shed. */
  arrived(): void;
  /** Receive-queue reads so far. */
  readonly queueReads: number;
  close(): void;
}

/**
 * What a receive-queue read cost the loop, ms: its wall time, but no more than the CPU the process spent
 * meanwhile. A read preempted halfway (the instance shares its cores with other processes, or with other
 * instances on a shared port) took long without working, and pacing the next read by that wall time left
 * the windows after it without a fresh reading, deciding by utilization: two instances sharing a port on
 * the 2-core machine shed 8 % of a 6,000/s step they answered cleanly otherwise (issue 11).
 */
export function readCostMs(wallMs: number, cpu: NodeJS.CpuUsage): number {
  return Math.min(wallMs, (cpu.user + cpu.system) / 1000);
}

/** perf_hooks' utilization since the previous call. */
function loopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return u;
  };
}

export function createShedSampler(o: ShedSamplerOptions): ShedSampler {
  const policy = o.policy ?? DEFAULT_SHED_POLICY;
  const shedder = new RegisterShedder(policy);
  const pending = o.pending ?? (() => 0);
  const utilizationSince = o.utilization ?? loopUtilization();
  let shrunk = false;
  let arrivals = 0;
  let wasShedding = false;
  let warnedCrowded = false;
  const crowded = (sockets: number): void => {
    if (warnedCrowded) return;
    warnedCrowded = true;
    o.log.info(
      { udpSockets: sockets, max: QUEUE_READ_MAX_SOCKETS },
      'too many UDP sockets in this network namespace to read the SIP receive queue from /proc/net/udp: registration shedding decides by event-loop utilization',
    );
  };
  const readQueue = o.readReceiveQueue ?? ((port: number) => readReceiveQueue(port, crowded, undefined, o.sipSocketInode));
  /** No receive-queue read before this (performance.now()): the read's cost is bounded (QUEUE_READ_BUDGET). */
  let queueReadAfter = 0;
  let queueReads = 0;
  /** When the shedder last observed a window (performance.now()). */
  let observedAt = performance.now();
  /** When the queue was last read with an answer (performance.now()). */
  let lastReadingAt = -Infinity;
  const sampleQueue = (): number | null | typeof HOLD => {
    const started = performance.now();
    if (started < queueReadAfter) return started - lastReadingAt < QUEUE_READING_FRESH_MS ? HOLD : null;
    queueReads++;
    const cpuBefore = process.cpuUsage();
    const bytes = readQueue(o.sipPort);
    queueReadAfter = nextQueueReadAt(started, readCostMs(performance.now() - started, process.cpuUsage(cpuBefore)));
    if (bytes !== null) lastReadingAt = started;
    return bytes;
  };
  const timer = setInterval(() => {
    const inFlight = pending();
    const utilization = utilizationSince();
    // no registrations: nothing to decide, and no /proc read per window on a keepalive-only load
    // (keepalive-callgrind bills every instruction of the process to its keepalives)
    if (arrivals === 0 && inFlight === 0 && shedder.fraction === 0) return;
    // a calm window (few arrivals, the loop idle part of it) decides by utilization, without the /proc read
    const wanted = queueSampleNeeded(shedder, { utilization, pending: inFlight, arrivals }, policy);
    const queueBytes = wanted ? sampleQueue() : null;
    if (queueBytes === HOLD) {
      arrivals = 0;
      return;
    }
    // where the bytes cannot be read (a crowded namespace), the probed delay before utilization
    const queueDelayMs = wanted && queueBytes === null ? (o.queueDelay?.() ?? null) : null;
    // the shedder's clock (its return calendar, its admitted rate): the time since it last observed,
    // calm and holding windows included
    const now = performance.now();
    const windowMs = now - observedAt;
    observedAt = now;
    shedder.observe({ queueBytes, queueDelayMs, utilization, pending: inFlight, arrivals, windowMs });
    arrivals = 0;
    if (o.setReceiveBuffer !== undefined && o.receiveBufferBytes !== undefined) {
      // at the cap the kernel drops what would be answered after the sender retransmitted it anyway;
      // the ordinary size again once shedding has stopped (a second of calm from the cap)
      const step = receiveBufferStep(shedder, shrunk);
      if (step !== 'keep') {
        shrunk = step === 'shrink';
        o.setReceiveBuffer(shrunk ? policy.sheddingReceiveBufferBytes : o.receiveBufferBytes);
      }
    }
    const shedding = shedder.fraction > 0;
    if (shedding !== wasShedding) {
      // transitions only: a log line per window would itself be load
      if (shedding) o.log.warn({ pending: inFlight, queueBytes, queueDelayMs, utilization, shedTotal: shedder.shed }, 'overloaded: shedding new registrations with 503');
      else o.log.info({ shedTotal: shedder.shed, returnsBooked: shedder.returnsBooked, admittedPerSec: shedder.admittedPerSec }, 'load back under the mark: registrations admitted again');
      wasShedding = shedding;
    }
  }, SAMPLE_MS);
  timer.unref();

  return {
    shedder,
    arrived: () => {
      arrivals++;
    },
    get queueReads() {
      return queueReads;
    },
    close: () => clearInterval(timer),
  };
}
