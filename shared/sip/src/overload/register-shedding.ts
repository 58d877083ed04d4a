// Overload without collapse (issue 11, SPEC SEC-3: every queue bounded): past its ceiling an instance
// answers new REGISTERs 503 with Retry-After (RFC 3261 §21.5.4, §20.33) instead of letting them queue
// in the socket's receive buffer, where they age past SIPp's / the device's 500 ms retransmission timer
// (RFC 3261 §17.1.2.2 Timer E) and come back twice, three times: the work multiplies exactly when there
// is no room for it, and registered devices' keepalives wait behind the heap. A 503 costs a few µs on
// the datagram shortcut, a challenge and a registration far more.
//
// What is shed, in order of least value: first REGISTERs (no Authorization) of devices not registered
// here. Never shed: the answer to a challenge we sent (finishing it is cheaper than starting over),
// a refresh from a registered device (it keeps the device online), keepalives (their own bucket).
//
// The signal is measured, not guessed: the bytes waiting in the SIP UDP socket's receive queue (Linux
// /proc/net/udp rx_queue: what has arrived and not been read, i.e. how far the instance is behind) or,
// where that table cannot be read, how long a datagram waits there before it is read (queue-probe.ts: a
// probe timed from send to read); the registrations in flight (handlers awaiting the store, Redis or
// MySQL); and, where neither queue signal exists, event-loop utilization (perf_hooks; on a machine
// shared with other work it reads busy while the process merely waits for a core, hence only the fallback). The shed fraction rises while a signal is
// over its mark and falls back slowly, so the instance settles at the rate it can finish; pure, with the
// sample passed in (the sampler is shed-sampler.ts, the /proc reads receive-queue.ts). Used by the
// signaling instances (services/signaling register-admission.ts) and by the SIP edge in front of them
// (services/sip-edge overload.ts), which both take every device's REGISTER on one UDP socket.
//
// The shed share moves like TCP's window, on the admitted share (1 − shed): cut to a quarter in each
// overloaded window, straight to the cap when the queue is far over its mark, given back additively in
// calm ones. What the instance lets through is work it commits to (a challenge, then a registration that
// is never shed), and it must stay under what it can finish whatever the storm's rate: a fixed share
// of arrivals does not. The register-storm bench (issue 11) measured a cap of 90 % with a rise of 10
// points per 100 ms: 10,000 devices at once at ~1,500/s on a machine where the instance got a quarter
// of a core let ~150/s through, about all the CPU it had; the 503s then waited behind them, the receive
// queue filled (7.5 MiB), SIPp's retransmissions doubled the arrivals and the registered devices'
// keepalives waited 6 s (p99).
//
// Retry-After is sized by the backlog (issue 11 target 5): the shedder keeps a return calendar
// (return-calendar.ts), the devices it told to come back in each of the next seconds, and tells the next
// one the earliest second, from retryAfterMinSec on, that is not yet full; full is the rate of first
// REGISTERs it admitted a second, the highest smoothed rate since the shedding began (admittedPerSec). 10,000 devices shed by an instance
// admitting 100/s are told 5..~105 s, the last back when the instance can take it, not later. The spread
// it replaces doubled each second at the cap up to 600 s whatever the backlog: in the 150,000-device
// fleet-kill 46,174 of the 50,115 moved devices were back in 123 s, and the last 8 % waited until 526 s
// for survivors idle long before. A few shed devices still get the ordinary small spread (retryAfterSpreadSec).
// The calendar's clock is the sum of the windows observed (ShedSample.windowMs): pure, like the rest.

import { ReturnCalendar } from './return-calendar.ts';

/** Marks of the controller; defaults in DEFAULT_SHED_POLICY. */
export interface ShedPolicy {
  /** Receive-queue bytes over which the shed fraction rises (kernel accounting: ~1–2 KiB per datagram). */
  readonly highQueueBytes: number;
  /** Queue bytes under which it falls (between the two it holds). */
  readonly lowQueueBytes: number;
  /**
   * Queueing delay of the SIP socket (queue-probe.ts: a probe datagram's wait from send to read), ms, over
   * which the shed fraction rises where the queue's bytes cannot be read (a namespace crowded with UDP
   * sockets: QUEUE_READ_MAX_SOCKETS), instead of utilization. Not the first signal (yet): as the only one,
   * two instances sharing a port at 6,000 registrations/s shed 70 % of a step they answer cleanly by the
   * bytes, a probe dropped from a queue at the shrunk shedding buffer reading as a second's delay (issue 11).
   */
  readonly highQueueDelayMs: number;
  /** Delay under which it falls, then. */
  readonly lowQueueDelayMs: number;
  /** Event-loop utilization (0..1) over which the shed fraction rises, when the queue is unknown. */
  readonly highUtilization: number;
  /** Utilization under which it falls, when the queue is unknown. */
  readonly lowUtilization: number;
  /** Registrations in flight over which the fraction rises regardless of utilization. */
  readonly maxPending: number;
  /** Highest shed fraction: some new devices always get through, so a storm drains instead of stalling. */
  readonly maxFraction: number;
  /** Admitted share (1 − fraction) multiplied by this in each overloaded window (multiplicative decrease). */
  readonly cut: number;
  /** Fraction removed per calm window (additive increase of the admitted share). */
  readonly fall: number;
  /**
   * SO_RCVBUF of the SIP UDP socket while shedding at the cap (restored when shedding stops): the
   * kernel then drops what would wait longer than the sender's retransmission timer (RFC 3261 §17.1.2.2,
   * T1 = 500 ms), which costs nothing; a queue of seconds is answered late, every request in it is
   * retransmitted meanwhile, and each copy is answered too.
   */
  readonly sheddingReceiveBufferBytes: number;
  /** Retry-After, s, at least: a device told less would be back while the storm that shed it is still queued. */
  readonly retryAfterMinSec: number;
  /**
   * The ordinary spread, s: a shed device is told `retryAfterMinSec` + random 0..this while that second of
   * the return calendar has room, so a few shed devices do not come back together (and not in the same
   * order as they were shed). Once those seconds are full the calendar decides (retryAfterMaxSpreadSec).
   */
  readonly retryAfterSpreadSec: number;
  /**
   * The farthest Retry-After past `retryAfterMinSec`, s, and the length of the return calendar (one
   * counter a second: its memory). A device is told the earliest second with room (admittedPerSec due in
   * it), so the waits grow with the backlog: (devices shed) / (rate admitted), not to this bound. Only when
   * every second up to it is full are the devices spread uniformly over all of it (an instance admitting
   * 10/s holds 6,000 in 600 s): each comes back, is shed again if there is still no room, and is booked then.
   */
  readonly retryAfterMaxSpreadSec: number;
}

export const DEFAULT_SHED_POLICY: ShedPolicy = {
  // 1 MiB ≈ 450–500 datagrams of the kernel's ~2.2 KiB accounting each: ~60 ms of arrivals at 4,000
  // registrations/s (two requests each), ~250 ms at 1,000/s, under the 500 ms retransmission timer. Half
  // of it (~30 ms at 4,000/s) was crossed by a GC pause or a checkpoint of an instance keeping up: it shed
  // 4 % of the fleet bench's 4,000/s step, which the instance answers cleanly with this mark (issue 11)
  highQueueBytes: 1024 * 1024,
  lowQueueBytes: 256 * 1024,
  // about what the 1 MiB mark is in time at 4,000–5,000 registrations/s (45–60 ms). A reading lags up to
  // a window (one probe in flight): with 100 ms the register-storm bench in a crowded namespace let a
  // 3.5 MiB queue build and its keepalives' p99 reached 504 ms (3 Dec)
  highQueueDelayMs: 50,
  lowQueueDelayMs: 15,
  highUtilization: 0.9,
  lowUtilization: 0.75,
  maxPending: 1000,
  // 1 % of a storm's first REGISTERs still get through: 15/s of a 1,500/s storm
  maxFraction: 0.99,
  // 75 % shed after one overloaded window, 94 % after two, the cap after four (400 ms: under the 500 ms
  // retransmission timer); a queue 4× over its mark goes to the cap at once
  cut: 0.25,
  // back to admitting everything 1 s after the queue drained
  fall: 0.1,
  // the kernel doubles it: 2 MiB of accounting, ~900 datagrams, ~100-250 ms of 503s. It must stay over the
  // high mark (shedBufferHidesMark): at 1 MiB of accounting beside the 1 MiB mark the queue sat just under
  // the mark while the kernel dropped what came on top, the share held between the marks, and keepalives
  // were lost and retransmitted (register-storm at 8,000/s, 3 Dec: p99 3.6 s; issue 11)
  sheddingReceiveBufferBytes: 1024 * 1024,
  retryAfterMinSec: 5,
  retryAfterSpreadSec: 25,
  retryAfterMaxSpreadSec: 600,
};

/**
 * Whether the receive buffer while shedding at the cap leaves no room over the high mark: the kernel
 * accounts up to twice SO_RCVBUF, and a queue that cannot pass the mark holds the share between the marks
 * while the kernel drops what arrives on top, keepalives included. Configuration refuses such a pair.
 */
export function shedBufferHidesMark(p: Pick<ShedPolicy, 'sheddingReceiveBufferBytes' | 'highQueueBytes'>): boolean {
  return 2 * p.sheddingReceiveBufferBytes <= p.highQueueBytes;
}

/** The sampler's window (shed-sampler.ts SAMPLE_MS), ms: what one observe() stands for when the sample does not say. */
export const SHED_WINDOW_MS = 100;

/**
 * Lowest admitted rate the return calendar is sized by, REGISTERs/s: an instance that admitted nothing
 * measurable (stalled, or shedding only briefly) still spreads its retries at 10 a second rather than
 * telling all of them the same second. A device back too early costs a 503 (a few µs) and is booked
 * again; one told too late waits for nothing, so the floor errs high: a quarter of a core registered
 * ~150/s (register-storm bench), and 10/s fills 600 s with 6,000 devices.
 */
export const MIN_ADMITTED_PER_SEC = 10;

/**
 * Time constant of the admitted rate's smoothing, ms: the controller cuts and gives back the admitted share
 * every window (AIMD), so one window's count swings by several times; a second of them is its rate.
 */
export const ADMITTED_RATE_SMOOTHING_MS = 1000;

/**
 * Past the ordinary spread, a booking lands in a random one of the first seconds with room over this
 * many, not all on the earliest: the calendar's second is the shedder's clock, up to a window stale
 * (a second in a window that holds, shed-sampler.ts), and devices add their own delays.
 */
export const RETURN_JITTER_SEC = 3;

/** A receive queue this many times its high mark holds seconds of work: shed at the cap at once. */
export const FAR_BEHIND = 4;

export interface ShedSample {
  /** Bytes in the SIP UDP socket's receive queue now; null where it cannot be read (not Linux). */
  readonly queueBytes: number | null;
  /** Queueing delay of the socket, ms (queue-probe.ts), used where `queueBytes` is null; null or absent: utilization decides. */
  readonly queueDelayMs?: number | null;
  /** performance.eventLoopUtilization() over the last window, 0..1. */
  readonly utilization: number;
  /** REGISTER handlers started and not yet settled. */
  readonly pending: number;
  /** REGISTERs received in the window: no registrations, nothing to shed (start-up work is not a storm). */
  readonly arrivals: number;
  /**
   * Time since the previous observe(), ms (the sampler measures it: it skips calm windows); default
   * SHED_WINDOW_MS. The shedder's clock: the return calendar and the admitted rate run on it.
   */
  readonly windowMs?: number;
}

export class RegisterShedder {
  readonly #policy: ShedPolicy;
  #fraction = 0;
  #shed = 0;
  /** The shedder's clock, ms: the sum of the windows observed. */
  #clockMs = 0;
  /** First REGISTERs let through (shouldShed false) since the last observe(). */
  #admittedInWindow = 0;
  /**
   * Smoothed first REGISTERs (and refreshes) admitted per second over the windows observed: all of a
   * calm window's arrivals, the ones shouldShed let through in a shedding one.
   */
  #admittedRate = 0;
  /**
   * The highest #admittedRate since the current shedding episode began (the window before it included):
   * what sizes the return calendar. At the cap the rate falls to the cap's 1 % of arrivals, the
   * controller's choice while a storm's 503s fill the instance, not what it can take once they stop: the
   * fleet-kill's survivors registered ~175 devices/s each while their shedders sat at the cap, and a
   * calendar sized by the cap's ~15/s would have told 50,000 devices to wait past 600 s. The peak errs
   * high (the window that crossed the mark admitted more than the instance finishes): a device back too
   * early is shed again (a few µs) and booked later; one told too late waits for nothing.
   */
  #episodePeak = MIN_ADMITTED_PER_SEC;
  /** Devices told to come back, per second of the next retryAfterMinSec + retryAfterMaxSpreadSec. */
  readonly #calendar: ReturnCalendar;

  constructor(policy: ShedPolicy = DEFAULT_SHED_POLICY) {
    this.#policy = policy;
    this.#calendar = new ReturnCalendar(policy.retryAfterMinSec + policy.retryAfterMaxSpreadSec);
  }

  /** One window's measurements: moves the shed fraction (bounded to [0, maxFraction]), the clock and the admitted rate. */
  observe(s: ShedSample): void {
    const p = this.#policy;
    const windowMs = Math.max(0, s.windowMs ?? SHED_WINDOW_MS);
    const wasShedding = this.#fraction > 0;
    this.#measureAdmitted(windowMs, s.arrivals);
    this.#clockMs += windowMs;
    this.#calendar.advanceTo(this.#clockMs / 1000);
    // the queue's bytes where readable, else its probed delay where measured, else the loop's utilization
    const delay = s.queueDelayMs ?? null;
    const high = s.queueBytes !== null ? s.queueBytes > p.highQueueBytes : delay !== null ? delay > p.highQueueDelayMs : s.utilization > p.highUtilization;
    const low = s.queueBytes !== null ? s.queueBytes < p.lowQueueBytes : delay !== null ? delay < p.lowQueueDelayMs : s.utilization < p.lowUtilization;
    if (s.arrivals > 0 && (high || s.pending > p.maxPending)) {
      const farBehind = s.queueBytes !== null ? s.queueBytes > FAR_BEHIND * p.highQueueBytes : delay !== null && delay > FAR_BEHIND * p.highQueueDelayMs;
      this.#fraction = farBehind ? p.maxFraction : Math.min(p.maxFraction, 1 - (1 - this.#fraction) * p.cut);
    } else if (s.arrivals === 0 || (low && s.pending <= p.maxPending)) this.#fraction = Math.max(0, this.#fraction - p.fall);
    this.#holdPeak(wasShedding);
  }

  /**
   * The window just ended, at the fraction in force during it: its admissions into the smoothed rate (a
   * calm window admitted every arrival), and the rate into the episode's peak while shedding; calm again,
   * the peak follows the rate (the next storm measures its own).
   */
  #measureAdmitted(windowMs: number, arrivals: number): void {
    const admitted = this.#fraction === 0 ? arrivals : this.#admittedInWindow;
    this.#admittedInWindow = 0;
    if (windowMs > 0) {
      const rate = (admitted * 1000) / windowMs;
      this.#admittedRate += (rate - this.#admittedRate) * (1 - Math.exp(-windowMs / ADMITTED_RATE_SMOOTHING_MS));
    }
  }

  /** After the fraction moved: the episode's peak held while shedding, reset by calm. */
  #holdPeak(wasShedding: boolean): void {
    if (this.#fraction === 0) this.#episodePeak = this.#admittedRate;
    else this.#episodePeak = wasShedding ? Math.max(this.#episodePeak, this.#admittedRate) : this.#admittedRate;
  }

  /** Share of new registrations answered 503 now. */
  get fraction(): number {
    return this.#fraction;
  }

  /**
   * Room of a second of the return calendar: the highest smoothed rate of first REGISTERs admitted since
   * this shedding episode began (#episodePeak), at least MIN_ADMITTED_PER_SEC. All of it, not a share: the rate was measured with the
   * refreshes, keepalives and 503s of the storm already served beside it, and the 503s are gone when
   * the devices return; devices still arriving for the first time then are shed and booked after them.
   */
  get admittedPerSec(): number {
    return Math.max(MIN_ADMITTED_PER_SEC, Math.round(this.#episodePeak));
  }

  /** Devices told to come back and not yet due (for the metrics and the log). */
  get returnsBooked(): number {
    return this.#calendar.total;
  }

  /** Shedding at the cap: the receive buffer shrinks to `sheddingReceiveBufferBytes` until shedding stops. */
  get atCap(): boolean {
    return this.#fraction >= this.#policy.maxFraction;
  }

  /** Registrations shed since start (for the metrics and the log). */
  get shed(): number {
    return this.#shed;
  }

  /** `random` in [0, 1): the caller's Math.random(), passed in so tests decide it. */
  shouldShed(random: number): boolean {
    if (this.#fraction === 0 || random >= this.#fraction) {
      this.#admittedInWindow++;
      return false;
    }
    this.#shed++;
    return true;
  }

  /**
   * Retry-After of a device shed now, s, booked in the return calendar; `random` in [0, 1) as in
   * shouldShed. The ordinary spread's second while it has room, else the earliest second with room
   * (jittered over RETURN_JITTER_SEC), else (all full) anywhere up to retryAfterMaxSpreadSec.
   */
  retryAfterSec(random: number): number {
    const p = this.#policy;
    const calendar = this.#calendar;
    const room = this.admittedPerSec;
    const min = p.retryAfterMinSec;
    const max = min + p.retryAfterMaxSpreadSec;
    let at = Math.min(max, min + Math.floor(random * (p.retryAfterSpreadSec + 1)));
    if (calendar.dueAt(at) >= room) {
      const first = calendar.firstWithRoom(min, max, room);
      if (first === undefined) at = min + Math.floor(random * (p.retryAfterMaxSpreadSec + 1));
      else {
        const jittered = first + Math.floor(random * RETURN_JITTER_SEC);
        at = jittered <= max && calendar.dueAt(jittered) < room ? jittered : first;
      }
    }
    calendar.book(at);
    return at;
  }
}

/**
 * REGISTERs in a window under which, with the loop idle part of the window, the receive queue needs no
 * reading: 64 datagrams at the kernel's ~2 KiB accounting each fill half the low mark (256 KiB) at most.
 */
export const CALM_ARRIVALS = 64;

/**
 * Share of the event loop the receive-queue read may take. /proc/net/udp lists every UDP socket of the
 * network namespace, not only ours: on a host with many (a media server's RTP ports, or the fleet-kill
 * bench's 54,000 SIPp devices) one read is megabytes of kernel text: 1.8 ms of system time per read
 * there, and the three shards spent ~37 % of a core each in it while registrations stalled; with
 * 300,000 sockets the machine did nothing else. The read is timed and the next one waits until it is
 * this share of the time since: every window on an ordinary host (a read of ~0.05 ms), rarer on a
 * crowded one, where the windows in between decide by utilization as when the queue is unreadable.
 */
export const QUEUE_READ_BUDGET = 0.02;

/**
 * Above this many UDP sockets in the network namespace (/proc/net/sockstat and sockstat6, a few lines),
 * /proc/net/udp is not read at all: the kernel regenerates its text from the start of the socket hash
 * for every 4 KiB read() (seq_file re-walks to the offset), so a full read costs O(sockets²). With the
 * fleet-kill bench's 300,000 SIPp sockets on the host one read() took 28 ms and a whole read minutes,
 * with the event loop blocked: the shards stopped heartbeating and dropped out of the node table. A
 * signaling instance in its own namespace (a container) has a handful; 4,096 reads in about a millisecond.
 * Past the bound the shedder decides by event-loop utilization, as where /proc is unreadable.
 */
export const QUEUE_READ_MAX_SOCKETS = 4096;

/** UDP sockets in use (IPv4 `UDP: inuse N` plus IPv6 `UDP6: inuse N`) in the text of /proc/net/sockstat(6), null when neither is listed. */
export function udpSocketsInUse(sockstat: string): number | null {
  let total: number | null = null;
  for (const m of sockstat.matchAll(/^UDP6?: inuse (\d+)/gm)) total = (total ?? 0) + Number(m[1]);
  return total;
}

/** When the next receive-queue read may start, after one that started at `startedAt` and took `tookMs`. */
export function nextQueueReadAt(startedAt: number, tookMs: number, budget: number = QUEUE_READ_BUDGET): number {
  return startedAt + tookMs / budget;
}

/**
 * Whether a window needs the receive queue read (/proc/net/udp: the whole table of the namespace, per
 * window; issue 11: ~30k instructions a window, a registration's worth at a slow pace). Not in a calm
 * window: nothing shed, nothing piling up in flight, few arrivals, and the event loop idle for at least
 * 1 − lowUtilization of it — idle means waiting in epoll, which returns at once while the socket holds
 * a datagram, so the queue was empty then and could only have refilled from the few arrivals since.
 * Such a window is calm by the utilization fallback too (observe() with queueBytes null falls, as it
 * would with a queue under its low mark); a burst landing after the idle moment is read in the next
 * window, whose arrivals or utilization are then high.
 */
export function queueSampleNeeded(
  shedder: Pick<RegisterShedder, 'fraction'>,
  w: Pick<ShedSample, 'utilization' | 'pending' | 'arrivals'>,
  policy: ShedPolicy = DEFAULT_SHED_POLICY,
): boolean {
  return shedder.fraction > 0 || w.pending > policy.maxPending || w.arrivals > CALM_ARRIVALS || !(w.utilization < policy.lowUtilization);
}

/**
 * What to do with the SIP UDP socket's receive buffer after a window: shrink it when shedding reached
 * the cap, restore it once shedding stopped (not as soon as the share leaves the cap: a storm still
 * arriving would fill 4 MiB again within one window), else keep it.
 */
export function receiveBufferStep(shedder: Pick<RegisterShedder, 'atCap' | 'fraction'>, shrunk: boolean): 'shrink' | 'restore' | 'keep' {
  if (!shrunk && shedder.atCap) return 'shrink';
  if (shrunk && shedder.fraction === 0) return 'restore';
  return 'keep';
}

/** The user part of a raw From value (`"n" <sip:user@host>;tag=…` or `sip:user@host;tag=…`), or undefined. */
export function fromUser(from: string): string | undefined {
  const at = from.indexOf('@');
  if (at < 0) return undefined;
  const sip = from.lastIndexOf('sip:', at);
  if (sip < 0) return undefined;
  return from.slice(sip + 4, at);
}

/** How /proc/net/udp(6) ends a `local_address` on `port`: `:` and the port in 4 upper-case hex digits. */
export function localPortSuffix(port: number): string {
  return `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * rx_queue of the UDP socket bound to `port` in the text of /proc/net/udp or /proc/net/udp6 (proc(5):
 * `local_address` is ADDR:PORT in hex, `tx_queue:rx_queue` in hex), summed over the sockets bound to
 * that port, or only the one with `inode` (field 10) when the port is shared with other instances
 * (SO_REUSEPORT: each has its own socket and its own queue); null when none is listed.
 */
export function udpReceiveQueueBytes(procNetUdp: string, port: number, inode?: string): number | null {
  const suffix = localPortSuffix(port);
  const needle = `${suffix} `;
  let total: number | null = null;
  // Only the lines naming the port are split: the sampler runs every SAMPLE_MS during a storm, and the
  // table holds every UDP socket of the network namespace (splitting all of it was ~10 % of a
  // registration's instructions under register-callgrind on a busy machine).
  for (let from = 0; ; ) {
    const at = procNetUdp.indexOf(needle, from);
    if (at < 0) break;
    const start = procNetUdp.lastIndexOf('\n', at) + 1;
    const nl = procNetUdp.indexOf('\n', at);
    const end = nl < 0 ? procNetUdp.length : nl;
    from = end;
    const f = procNetUdp.slice(start, end).trim().split(/\s+/);
    if (f.length < 5 || f[1]?.endsWith(suffix) !== true) continue; // the port was the remote one
    if (inode !== undefined && f[9] !== inode) continue; // another instance's socket on a shared port
    const rx = Number.parseInt(f[4]?.split(':')[1] ?? '', 16);
    if (Number.isFinite(rx)) total = (total ?? 0) + rx;
  }
  return total;
}

const AUTHORIZATION_LINE = Buffer.from('\r\nAuthorization:', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/**
 * A REGISTER datagram with an Authorization header line (as devices spell it) in its header section:
 * the second leg of a registration, the answer to a challenge, which is never shed (finishing it is
 * cheaper than starting over). Read from the bytes, without a parse.
 */
export function answersChallenge(data: Buffer): boolean {
  const at = data.indexOf(AUTHORIZATION_LINE);
  return at >= 0 && at < data.indexOf(HEAD_END);
}
