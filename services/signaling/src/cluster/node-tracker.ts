// This instance's view of the node table (SPEC NODE-1, ROUTE-5, CASC-1, FAIL-4): the last listing read
// from the registry, refreshed by every node heartbeat and on demand when a forward needs a node the
// view does not show online. Online is the database's judgement at read time.
//
// Two refinements keep forwards to a dead owner fast and honest (FAIL-1):
//  - an owner that refused our connection is "offline" until its heartbeat advances in the table
//    (a restarted process heartbeats again), so later requests fail at once without connecting;
//  - a failed refresh keeps the last good listing (FAIL-4: leadership does not flap on a transient
//    MySQL error) and on-demand refreshes pause until the heartbeat loop has a good read again;
//  - for one online window after reads work again, nodes that were online stay online in this view: the
//    others could not heartbeat through the same outage either, and reading them as offline would
//    move the cascade leader and fail their devices' forwards until they have heartbeated again.
//
// A node dies between two reads; the heartbeat loop's next read may come up to one beat after its row
// leaves the online window. So every read also arms one timer for the moment the first other online
// node's last beat leaves the window (the store says how long that is): if it has not beaten by then,
// that read sees it offline and the leader moves at once (FAIL-2: takeover within window + read time,
// whatever the heartbeat interval). A live node's next beat pushes the timer out again, so in a healthy
// cluster it never fires.
import { electCascadeLeader, type NodeRegistry, type NodeRow } from '@vms/cluster';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { OwnerNodeState } from './route-decision.ts';

export interface NodeTrackerOptions {
  readonly registry: NodeRegistry;
  readonly selfCode: string;
  /** A node is online when its last heartbeat is this recent on the database clock. */
  readonly onlineWindowMs: number;
  readonly clock: Clock;
  /** On-demand refreshes at most this often. Default 1000 ms. */
  readonly minRefreshIntervalMs?: number;
  /** Called when the computed cascade leader changes (the first computation included). */
  readonly onLeaderChange?: (leader: string, previous: string | null) => void;
  /** Every read of the table (SPEC CASC-1, FAIL-4): the accepted rows, or the read error. */
  readonly onRead?: (read: NodeTableReadResult) => void;
}

/** Read this long after a row's computed expiry: the store's clock must have passed it too. */
const EXPIRY_READ_MARGIN_MS = 25;

export type NodeTableReadResult = { readonly ok: true; readonly rows: readonly NodeRow[] } | { readonly ok: false; readonly error: unknown };

export interface NodeSnapshot {
  readonly rows: readonly NodeRow[];
  /** Local clock time of the read. */
  readonly readAt: number;
}

export class NodeTracker {
  readonly #o: NodeTrackerOptions;
  readonly #minRefreshMs: number;
  #snapshot: NodeSnapshot | null = null;
  #byCode = new Map<string, NodeRow>();
  /** node code → its last heartbeat (ms) when it refused a connection. */
  readonly #refused = new Map<string, number>();
  #inFlight: Promise<readonly NodeRow[]> | null = null;
  /** Last read a request asked for (heartbeat reads do not count: see #mayRefreshOnDemand). */
  #lastOnDemandAt = Number.NEGATIVE_INFINITY;
  #lastAttemptFailed = false;
  /** First good read after failed ones. */
  #recoveredAt = Number.NEGATIVE_INFINITY;
  #leader: string;
  #leaderComputed = false;
  #expiryTimer: TimerHandle | undefined;
  #closed = false;

  constructor(opts: NodeTrackerOptions) {
    this.#o = opts;
    this.#minRefreshMs = opts.minRefreshIntervalMs ?? 1000;
    this.#leader = opts.selfCode; // CASC-1: with no table, self
  }

  get snapshot(): NodeSnapshot | null {
    return this.#snapshot;
  }

  /** CASC-1 on the last good listing. */
  get cascadeLeader(): string {
    return this.#leader;
  }

  /** Online nodes in the last good listing. */
  onlineCount(): number {
    return this.#snapshot?.rows.filter((r) => r.online).length ?? 0;
  }

  /** Stops the expiry read timer; later reads still work (the owner of the registry closes it). Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#expiryTimer !== undefined) this.#o.clock.clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
  }

  /** Reads the table (one read in flight at a time). Rejects on failure, keeping the last good listing. */
  refresh(): Promise<readonly NodeRow[]> {
    this.#inFlight ??= (async () => {
      try {
        const read = await this.#o.registry.listNodes(this.#o.onlineWindowMs);
        if (this.#lastAttemptFailed) this.#recoveredAt = this.#o.clock.now();
        this.#lastAttemptFailed = false;
        const rows = this.#accept(read);
        this.#armExpiryRead(read);
        this.#o.onRead?.({ ok: true, rows });
        return rows;
      } catch (err) {
        this.#lastAttemptFailed = true;
        this.#o.onRead?.({ ok: false, error: err });
        throw err;
      } finally {
        this.#inFlight = null;
      }
    })();
    return this.#inFlight;
  }

  /** SPEC ROUTE-5: may this instance forward to `code` now? */
  async stateOf(code: string): Promise<OwnerNodeState> {
    let state = this.#stateNow(code);
    if (state.kind !== 'online' && this.#mayRefreshOnDemand()) {
      if (this.#inFlight === null) this.#lastOnDemandAt = this.#o.clock.now();
      await this.refresh().catch(() => undefined); // the heartbeat loop reports read failures
      state = this.#stateNow(code);
    }
    return state;
  }

  /** As stateOf, from the last listing only: never reads the table (the HTTP edge decides synchronously). */
  stateNow(code: string): OwnerNodeState {
    return this.#stateNow(code);
  }

  /** The owner refused a connection: nobody listens there. Offline until its heartbeat advances. */
  markRefused(code: string): void {
    this.#refused.set(code, this.#byCode.get(code)?.lastHeartbeat.getTime() ?? Number.NEGATIVE_INFINITY);
  }

  #stateNow(code: string): OwnerNodeState {
    const row = this.#byCode.get(code);
    if (row === undefined) return { kind: 'unknown' };
    if (!row.online || this.#refused.has(code)) return { kind: 'offline' };
    return { kind: 'online', baseUrl: row.internalBaseUrl };
  }

  // Requests may read the table themselves at most once per minRefreshMs, whenever the heartbeat loop
  // last read it: a node that started just after that read (its devices register and are controlled
  // within the same heartbeat interval) is found by the first request for one of them, not 4603 until
  // the next beat. A dead owner costs one small read per second at most.
  #mayRefreshOnDemand(): boolean {
    if (this.#inFlight !== null) return true; // join the read in flight
    if (this.#lastAttemptFailed) return false; // FAIL-4: do not make requests wait on a dead database
    return this.#o.clock.now() - this.#lastOnDemandAt >= this.#minRefreshMs;
  }

  /** From the rows as the store judged them (not the post-outage grace view: those expired already). */
  #armExpiryRead(read: readonly NodeRow[]): void {
    if (this.#expiryTimer !== undefined) this.#o.clock.clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    if (this.#closed) return;
    let soonest = Number.POSITIVE_INFINITY;
    for (const r of read) if (r.online && r.code !== this.#o.selfCode && r.offlineInMs > 0 && r.offlineInMs < soonest) soonest = r.offlineInMs;
    if (soonest === Number.POSITIVE_INFINITY) return;
    this.#expiryTimer = this.#o.clock.setTimeout(() => {
      this.#expiryTimer = undefined;
      this.refresh().catch(() => undefined); // the heartbeat loop reports read failures
    }, soonest + EXPIRY_READ_MARGIN_MS);
  }

  #accept(read: readonly NodeRow[]): readonly NodeRow[] {
    const now = this.#o.clock.now();
    let rows = read;
    if (now - this.#recoveredAt < this.#o.onlineWindowMs) {
      const wasOnline = new Set(this.#snapshot?.rows.filter((r) => r.online).map((r) => r.code));
      rows = read.map((r) => (!r.online && wasOnline.has(r.code) ? { ...r, online: true } : r));
    }
    this.#snapshot = { rows, readAt: now };
    this.#byCode = new Map(rows.map((r) => [r.code, r]));
    for (const [code, heartbeatAtRefusal] of this.#refused) {
      const row = this.#byCode.get(code);
      if (row !== undefined && row.lastHeartbeat.getTime() > heartbeatAtRefusal) this.#refused.delete(code);
    }
    const leader = electCascadeLeader(rows, this.#o.selfCode);
    const previous = this.#leaderComputed ? this.#leader : null;
    if (leader !== previous) {
      this.#leader = leader;
      this.#leaderComputed = true;
      this.#o.onLeaderChange?.(leader, previous);
    }
    return rows;
  }
}
