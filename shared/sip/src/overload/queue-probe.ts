// How long a datagram arriving at the SIP UDP socket now waits before the process reads it, measured: a
// probe datagram from a socket of our own to the SIP socket, timed from its send to its read. The
// shedder's signal where the queue's bytes cannot be read (register-shedding.ts QUEUE_READ_MAX_SOCKETS: a
// network namespace with thousands of UDP sockets, a media server's RTP ports say, where /proc/net/udp
// costs O(sockets²) to read). Event-loop utilization, the fallback before, reads busy well before an
// instance falls behind (0.9–1 at 4,000 registrations/s with an empty queue), so a crowded host shed most
// of what it could answer (issue 11).
//
// The probe is one to four LFs: RFC 5626 §4.4.1's keepalive on UDP, which SIP endpoints drop unanswered
// (ours does, before any parse), so one that reaches another instance on a shared port costs it nothing.
// Its length numbers it (1..4), so that a late probe is not taken for the one sent after it.
import dgram from 'node:dgram';
import { isIP } from 'node:net';

/** A probe unanswered this long is taken as lost (dropped from a full queue): its age is the reading, and another goes. */
export const PROBE_LOST_MS = 1000;
/** A delay measured longer ago than this says nothing of now: a new probe is needed. */
export const PROBE_FRESH_MS = 1000;
/** Distinct probes (their lengths: 1..4 LFs). */
const PROBE_IDS = 4;

/** The reading, pure: what the last probe measured and the age of the one in flight. */
export class QueueDelayReading {
  #sentAt: number | null = null;
  #sentId = 0;
  #last: number | null = null;
  #lastAt = -Infinity;

  /** Whether a probe has come back (or been given up as lost) since the start. */
  get measured(): boolean {
    return this.#last !== null;
  }

  /** The id of the probe to send now (1..4), or null while one is in flight and not yet lost. */
  next(now: number): number | null {
    if (this.#sentAt !== null) {
      const age = now - this.#sentAt;
      if (age < PROBE_LOST_MS) return null;
      // lost, or waiting in a queue over a second long: either way a second's delay is the reading
      this.#last = age;
      this.#lastAt = now;
    }
    this.#sentId = (this.#sentId % PROBE_IDS) + 1;
    this.#sentAt = now;
    return this.#sentId;
  }

  /** Probe `id` read at `now`; an earlier one, overtaken by a resend, is ignored. */
  arrived(id: number, now: number): void {
    if (this.#sentAt === null || id !== this.#sentId) return;
    this.#last = now - this.#sentAt;
    this.#lastAt = now;
    this.#sentAt = null;
  }

  /**
   * The queueing delay now, ms: the last probe's, or the age of the one in flight when that is longer (a
   * read stalled now shows before its probe comes back); null without a fresh measurement.
   */
  delayAt(now: number): number | null {
    const age = this.#sentAt === null ? null : now - this.#sentAt;
    const last = now - this.#lastAt <= PROBE_FRESH_MS ? this.#last : null;
    if (age === null) return last;
    return last === null ? (age > 0 ? age : null) : Math.max(last, age);
  }
}

/** The probe of one SIP socket: call `sample()` once a window, `arrived()` from the socket's datagram handler. */
export class QueueProbe {
  readonly #socket: dgram.Socket;
  readonly #target: { readonly host: string; readonly port: number };
  readonly #reading = new QueueDelayReading();
  readonly #now: () => number;
  #closed = false;

  private constructor(socket: dgram.Socket, target: { host: string; port: number }, now: () => number) {
    this.#socket = socket;
    this.#target = target;
    this.#now = now;
    socket.on('error', () => {}); // an ICMP error on loopback must not crash; the probe then reads as lost
  }

  /**
   * A probe socket aimed at the SIP socket on `bound` (a wildcard address is reached on loopback).
   * `address` is where its datagrams come from, for the SIP socket's handler to recognise them.
   */
  static async open(bound: { readonly address: string; readonly port: number }, now: () => number = () => performance.now()): Promise<QueueProbe> {
    const family = isIP(bound.address) === 6 ? 6 : 4;
    const wildcard = bound.address === '0.0.0.0' || bound.address === '::';
    const host = wildcard ? (family === 6 ? '::1' : '127.0.0.1') : bound.address;
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new QueueProbe(socket, { host, port: bound.port }, now);
  }

  /** Where the probes come from. */
  get source(): { readonly address: string; readonly port: number } {
    const a = this.#socket.address();
    return { address: a.address, port: a.port };
  }

  /** Sends a probe when none is in flight; returns the delay now (QueueDelayReading.delayAt). */
  sample(): number | null {
    const now = this.#now();
    const id = this.#closed ? null : this.#reading.next(now);
    if (id !== null) this.#socket.send(LF.subarray(0, id), this.#target.port, this.#target.host);
    return this.#reading.delayAt(now);
  }

  /** Whether a probe has come back since it opened. */
  get measured(): boolean {
    return this.#reading.measured;
  }

  /** A datagram of `length` bytes from `source` was read by the SIP socket. */
  arrived(length: number): void {
    this.#reading.arrived(length, this.#now());
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.close();
  }
}

const LF = Buffer.from('\n'.repeat(PROBE_IDS), 'latin1');
