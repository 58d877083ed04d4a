// The edge's TCP links to shards (issue 14, `VMS_EDGE_SHARD_TRANSPORT=tcp`): per shard a fixed pool of
// connections the edge opens, each device's messages pinned to one of them (by its flow), so the shard sees
// one stable flow per device (SPEC SEC-1 binds the device to the connection and the edge-named device flow).
// The shard's requests to the device come back on that same connection (its session flow) and the edge
// reads them like any other. Bounded everywhere (SPEC SEC-3):
//  - connections: `connections` per shard, links for at most `maxShards` shards;
//  - what waits: per shard at most `maxQueued` messages queued (no connection yet) or being written; past
//    it send() says no and the edge answers 503 + Retry-After;
//  - a connect attempt is bounded by the transport's connect timeout; what was queued for it is dropped
//    when it fails (UDP devices retransmit, and the retransmission is placed again);
//  - reconnect with exponential backoff (`backoffMinMs` doubling to `backoffMaxMs`) while the shard is
//    wanted (online in the node table); otherwise the slot waits for the next message to connect.
// Time comes from the clock (tests drive a FakeClock).
import type { Clock, TimerHandle } from '@vms/clock';
import type { Flow, SipMessage, SipLogger } from '@vms/sip';

/** What the links need of the transport (SipTransport.openTcp / send with connectionOnly). */
export interface LinkTransport {
  open(host: string, port: number, onClose: (reason: string) => void): Promise<Flow>;
  write(flow: Flow, msg: SipMessage): Promise<void>;
}

export interface ShardLinkOptions {
  /** Connections per shard. Default 2. */
  readonly connections?: number;
  /** Messages per shard queued or being written; past it send() refuses (503). Default 1,000. */
  readonly maxQueued?: number;
  readonly backoffMinMs?: number;
  /** Default 5,000. */
  readonly backoffMaxMs?: number;
  /** Shards with a link at most (more → refused). Default 1,024. */
  readonly maxShards?: number;
  /** Whether to keep reconnecting to a shard whose connection closed or failed (online in the node table). */
  readonly wanted: (host: string, port: number) => boolean;
  readonly clock: Clock;
  readonly log: SipLogger;
}

export const DEFAULT_SHARD_CONNECTIONS = 2;
export const DEFAULT_SHARD_MAX_QUEUED = 1000;
export const DEFAULT_BACKOFF_MIN_MS = 100;
export const DEFAULT_BACKOFF_MAX_MS = 5000;
export const DEFAULT_MAX_SHARDS = 1024;

export interface ShardLinkStats {
  open: number;
  connects: number;
  connectFailures: number;
  /** Queued messages dropped because their connect attempt failed, or the links closed. */
  dropped: number;
  /** send() refusals: the shard's bound was full (or too many shards). */
  refused: number;
  writeErrors: number;
}

type SlotState = 'idle' | 'connecting' | 'open' | 'backoff';

interface Slot {
  state: SlotState;
  flow: Flow | undefined;
  readonly queue: SipMessage[];
  backoffMs: number;
  timer: TimerHandle | undefined;
}

interface Link {
  readonly host: string;
  readonly port: number;
  readonly slots: Slot[];
  /** Queued + being written, over all slots. */
  pending: number;
}

/** FNV-1a: the slot of a pin (a device's flow), stable for the life of the process. */
function slotOf(pin: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < pin.length; i++) h = Math.imul(h ^ pin.charCodeAt(i), 0x01000193);
  return (h >>> 0) % n;
}

export class ShardLinks {
  readonly #links = new Map<string, Link>();
  readonly #o: Required<Omit<ShardLinkOptions, 'wanted' | 'clock' | 'log'>> & Pick<ShardLinkOptions, 'wanted' | 'clock' | 'log'>;
  readonly #stats: ShardLinkStats = { open: 0, connects: 0, connectFailures: 0, dropped: 0, refused: 0, writeErrors: 0 };
  #closed = false;

  constructor(
    private readonly transport: LinkTransport,
    o: ShardLinkOptions,
  ) {
    this.#o = {
      connections: o.connections ?? DEFAULT_SHARD_CONNECTIONS,
      maxQueued: o.maxQueued ?? DEFAULT_SHARD_MAX_QUEUED,
      backoffMinMs: o.backoffMinMs ?? DEFAULT_BACKOFF_MIN_MS,
      backoffMaxMs: o.backoffMaxMs ?? DEFAULT_BACKOFF_MAX_MS,
      maxShards: o.maxShards ?? DEFAULT_MAX_SHARDS,
      wanted: o.wanted,
      clock: o.clock,
      log: o.log,
    };
    if (this.#o.connections < 1 || this.#o.maxQueued < 1 || this.#o.backoffMinMs < 1 || this.#o.backoffMaxMs < this.#o.backoffMinMs) throw new RangeError('bad shard link bounds');
  }

  stats(): Readonly<ShardLinkStats> {
    return { ...this.#stats };
  }

  /** The flows of a shard's open connections (tests, metrics). */
  openFlows(host: string, port: number): Flow[] {
    return (this.#links.get(`${host}|${port}`)?.slots ?? []).flatMap((s) => (s.state === 'open' && s.flow !== undefined ? [s.flow] : []));
  }

  /**
   * Sends `msg` to the shard at host:port on the connection `pin` (a device's flow) maps to: now when it is
   * open, else once it connects. False when the shard's bound is full (the caller answers 503).
   */
  send(host: string, port: number, pin: string, msg: SipMessage): boolean {
    if (this.#closed) return false;
    const link = this.#link(host, port);
    if (link === undefined || link.pending >= this.#o.maxQueued) {
      this.#stats.refused++;
      return false;
    }
    const slot = link.slots[slotOf(pin, link.slots.length)] as Slot;
    if (slot.state === 'open' && slot.flow !== undefined) {
      this.#write(link, slot.flow, msg);
      return true;
    }
    link.pending++;
    slot.queue.push(msg);
    if (slot.state === 'idle') this.#connect(link, slot);
    return true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const link of this.#links.values()) {
      for (const slot of link.slots) {
        if (slot.timer !== undefined) this.#o.clock.clearTimeout(slot.timer);
        this.#stats.dropped += slot.queue.length;
        slot.queue.length = 0;
      }
    }
    this.#links.clear();
  }

  #link(host: string, port: number): Link | undefined {
    const key = `${host}|${port}`;
    let link = this.#links.get(key);
    if (link === undefined) {
      if (this.#links.size >= this.#o.maxShards) return undefined;
      link = { host, port, pending: 0, slots: Array.from({ length: this.#o.connections }, (): Slot => ({ state: 'idle', flow: undefined, queue: [], backoffMs: this.#o.backoffMinMs, timer: undefined })) };
      this.#links.set(key, link);
    }
    return link;
  }

  #write(link: Link, flow: Flow, msg: SipMessage): void {
    link.pending++;
    this.transport
      .write(flow, msg)
      .catch((err: unknown) => {
        this.#stats.writeErrors++;
        this.#o.log.debug({ err, host: link.host, port: link.port }, 'edge write to shard failed');
      })
      .finally(() => link.pending--);
  }

  #connect(link: Link, slot: Slot): void {
    slot.state = 'connecting';
    slot.timer = undefined;
    this.#stats.connects++;
    this.transport
      .open(link.host, link.port, (reason) => this.#lost(link, slot, reason))
      .then((flow) => {
        if (this.#closed || slot.state !== 'connecting') return;
        slot.state = 'open';
        slot.flow = flow;
        slot.backoffMs = this.#o.backoffMinMs;
        this.#stats.open++;
        this.#o.log.info({ host: link.host, port: link.port }, 'edge connected to shard');
        const queued = slot.queue.splice(0);
        link.pending -= queued.length;
        for (const msg of queued) this.#write(link, flow, msg);
      })
      .catch((err: unknown) => {
        if (this.#closed) return;
        this.#stats.connectFailures++;
        // what waited for this attempt goes: its senders retransmit (and are placed again)
        this.#stats.dropped += slot.queue.length;
        link.pending -= slot.queue.length;
        slot.queue.length = 0;
        this.#o.log.debug({ err, host: link.host, port: link.port, retryMs: slot.backoffMs }, 'edge could not connect to shard');
        this.#retryLater(link, slot);
      });
  }

  /** A connection closed (the shard restarted, the network broke, an idle timeout). */
  #lost(link: Link, slot: Slot, reason: string): void {
    if (this.#closed || slot.state !== 'open') return;
    this.#stats.open--;
    slot.state = 'idle';
    slot.flow = undefined;
    this.#o.log.info({ host: link.host, port: link.port, reason }, 'edge connection to shard closed');
    // an idle connection is not missed: the next message opens one
    if (reason !== 'idle-timeout' && this.#o.wanted(link.host, link.port)) this.#connect(link, slot);
  }

  #retryLater(link: Link, slot: Slot): void {
    const delay = slot.backoffMs;
    slot.backoffMs = Math.min(this.#o.backoffMaxMs, slot.backoffMs * 2);
    slot.state = 'backoff';
    slot.timer = this.#o.clock.setTimeout(() => {
      slot.timer = undefined;
      if (this.#closed || slot.state !== 'backoff') return;
      // keep trying while the shard is online in the node table or someone waits; else the next message dials
      if (slot.queue.length > 0 || this.#o.wanted(link.host, link.port)) this.#connect(link, slot);
      else slot.state = 'idle';
    }, delay);
  }
}
