// Wires RegisterShedder (register-shedding.ts) to the stack: a stateless REGISTER handler that answers
// 503 + Retry-After on the datagram shortcut while shedding, else the first leg's 401 challenge
// (register-challenge.ts), and passes everything else to the ordinary REGISTER handler,
// the count of REGISTER handlers in flight, and the sampler (the SIP socket's receive queue from
// /proc/net/udp, event-loop utilization from perf_hooks) that feeds the shedder every SAMPLE_MS.
import type { RequestHandler, StatelessAnswer, StatelessHandler, StatelessRequest } from '@vms/sip';
import { SipStatus } from '@vms/sip';
import { readFileSync } from 'node:fs';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { DeviceFlows } from './device-flows.ts';
import type { StatelessChallenge } from './register-challenge.ts';
import { DEFAULT_SHED_POLICY, fromUser, nextQueueReadAt, QUEUE_READ_MAX_SOCKETS, queueSampleNeeded, receiveBufferStep, RegisterShedder, udpReceiveQueueBytes, udpSocketsInUse, type ShedPolicy } from './register-shedding.ts';

/** Window of one utilization sample: short enough to react before the 500 ms retransmission timer. */
export const SAMPLE_MS = 100;

export interface RegisterAdmission {
  /** For `stack.onStatelessRequest('REGISTER', …)`. */
  readonly stateless: StatelessHandler;
  /** Its StatelessOptions.ordinary: answersChallenge. */
  readonly ordinary: (data: Buffer) => boolean;
  /** The ordinary REGISTER handler, counted while in flight. */
  wrap(handler: RequestHandler): RequestHandler;
  readonly shedder: RegisterShedder;
  /** Receive-queue reads so far. */
  readonly queueReads: number;
  close(): void;
}

const readProc = (file: string): string => readFileSync(file, 'latin1');

/** UDP sockets of the network namespace (sockstat: a few lines, whatever the count), null when unreadable. */
function udpSocketsOfNamespace(read: (file: string) => string): number | null {
  let total: number | null = null;
  for (const file of ['/proc/net/sockstat', '/proc/net/sockstat6']) {
    try {
      const n = udpSocketsInUse(read(file));
      if (n !== null) total = (total ?? 0) + n;
    } catch {
      // not Linux, or no IPv6
    }
  }
  return total;
}

/**
 * Receive-queue bytes of the UDP socket on `port` (IPv4 and IPv6 tables); null off Linux, when
 * unreadable, or when the namespace holds more than QUEUE_READ_MAX_SOCKETS UDP sockets (the table's
 * read would block the loop: see there). `crowded` hears the count then.
 */
export function readReceiveQueue(port: number, crowded?: (sockets: number) => void, read: (file: string) => string = readProc): number | null {
  const sockets = udpSocketsOfNamespace(read);
  if (sockets !== null && sockets > QUEUE_READ_MAX_SOCKETS) {
    crowded?.(sockets);
    return null;
  }
  let total: number | null = null;
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    try {
      const q = udpReceiveQueueBytes(read(file), port);
      if (q !== null) total = (total ?? 0) + q;
    } catch {
      // not Linux, or no IPv6: the utilization fallback decides
    }
  }
  return total;
}

const AUTHORIZATION_LINE = Buffer.from('\r\nAuthorization:', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/**
 * A REGISTER datagram with an Authorization header line (as devices spell it) in its header section:
 * the second leg of a registration, which `stateless` never answers but passes on after a peek of the
 * whole datagram (issue 11: ~15k instructions a registration), so it goes to the ordinary handler
 * unpeeked (StatelessOptions.ordinary). Not shed (`shed` finishes a challenge answered), and challenged
 * by `challenge` only when the value holds no credentials — as the ordinary handler challenges it.
 * Such a request is not counted in `arrivals`: a first leg or a refresh is.
 */
export function answersChallenge(data: Buffer): boolean {
  const at = data.indexOf(AUTHORIZATION_LINE);
  return at >= 0 && at < data.indexOf(HEAD_END);
}

export interface RegisterAdmissionOptions {
  readonly flows: DeviceFlows;
  readonly log: Logger;
  /** The SIP UDP port, whose receive queue is the main signal. */
  readonly sipPort: number;
  readonly random?: () => number;
  /** The shedder's marks (vms.limits.register-shed-*); default DEFAULT_SHED_POLICY. */
  readonly policy?: ShedPolicy;
  /** The stateless 401 of a first leg, tried when the REGISTER is not shed; absent: every REGISTER not shed goes on. */
  readonly challenge?: StatelessChallenge;
  /** Resizes the SIP UDP socket's receive buffer: to the policy's shedding size at the cap, back to `receiveBufferBytes` after. */
  readonly setReceiveBuffer?: (bytes: number) => void;
  /** The socket's ordinary receive buffer, restored when shedding stops. */
  readonly receiveBufferBytes?: number;
  /** Reads the receive queue of the socket on a port (default: /proc/net/udp and udp6); for tests. */
  readonly readReceiveQueue?: (port: number) => number | null;
}

export function createRegisterAdmission(o: RegisterAdmissionOptions): RegisterAdmission {
  const policy = o.policy ?? DEFAULT_SHED_POLICY;
  const shedder = new RegisterShedder(policy);
  let shrunk = false;
  const random = o.random ?? Math.random;
  let pending = 0;
  let arrivals = 0;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
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
  const readQueue = o.readReceiveQueue ?? ((port: number) => readReceiveQueue(port, crowded));
  /** No receive-queue read before this (performance.now()): the read's cost is bounded (QUEUE_READ_BUDGET). */
  let queueReadAfter = 0;
  let queueReads = 0;
  const sampleQueue = (): number | null => {
    const started = performance.now();
    if (started < queueReadAfter) return null;
    queueReads++;
    const bytes = readQueue(o.sipPort);
    queueReadAfter = nextQueueReadAt(started, performance.now() - started);
    return bytes;
  };
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    if (arrivals === 0 && pending === 0 && shedder.fraction === 0) {
      // no registrations: nothing to decide, and no /proc read per window on a keepalive-only load
      // (keepalive-callgrind bills every instruction of the process to its keepalives)
      last = now;
      return;
    }
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    // a calm window (few arrivals, the loop idle part of it) decides by utilization, without the /proc read
    const queueBytes = queueSampleNeeded(shedder, { utilization, pending, arrivals }, policy) ? sampleQueue() : null;
    shedder.observe({ queueBytes, utilization, pending, arrivals });
    last = now;
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
      if (shedding) o.log.warn({ pending, queueBytes, shedTotal: shedder.shed }, 'overloaded: shedding new registrations with 503');
      else o.log.info({ shedTotal: shedder.shed }, 'load back under the mark: registrations admitted again');
      wasShedding = shedding;
    }
  }, SAMPLE_MS);
  timer.unref();

  /** 503 + Retry-After for a new registration while shedding, else undefined. */
  const shed = (req: StatelessRequest): StatelessAnswer | undefined => {
    if (req.hasHeader('Authorization')) return undefined; // answers our challenge: finish it
    const deviceId = fromUser(req.from);
    if (deviceId !== undefined && o.flows.get(deviceId) !== undefined) return undefined; // refresh keeps it online
    if (!shedder.shouldShed(random())) return undefined;
    return { status: SipStatus.ServiceUnavailable, headers: [['Retry-After', String(shedder.retryAfterSec(random()))]] };
  };
  const challenge = o.challenge;
  const stateless: StatelessHandler = (req): StatelessAnswer | undefined => {
    arrivals++; // a request taking the parsed path after the shortcut passed it is counted twice: a rough signal is enough
    // shedding first: a 503 costs less than a challenge (a keyed hash), and a shed device comes back later
    const answer = shedder.fraction === 0 ? undefined : shed(req);
    return answer ?? challenge?.(req);
  };

  return {
    stateless,
    ordinary: answersChallenge,
    shedder,
    get queueReads() {
      return queueReads;
    },
    wrap: (handler) => async (req, ctx) => {
      pending++;
      try {
        await handler(req, ctx);
      } finally {
        pending--;
      }
    },
    close: () => clearInterval(timer),
  };
}
