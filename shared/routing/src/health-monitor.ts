/**
 * Health probing of a table's destinations (SPEC §10 health; dispatcher's ds_ping_interval). Every
 * `intervalMs` each destination whose kind has a prober (SIP OPTIONS for 'sip', HTTP GET for 'http', given
 * by the service: this package does no I/O of its own) is probed once, within `timeoutMs`, and the result
 * goes through the shared HealthStore (health-store.redis.ts with Redis: every instance's probes count
 * against one state). Callers report business outcomes (`reportBusiness`) against the same state, and an
 * operator's `setManual` overrides it; probing keeps the automatic state current under an override but
 * never lifts it (health.ts).
 *
 * Decisions read `state(id)`, a synchronous snapshot refreshed from the store after every round and at
 * once when another instance announces a change (`refresh`, wired to the Redis channel by the service):
 * all instances agree within one probe interval even if a change announcement is lost.
 */
import type { Clock, TimerHandle } from '@vms/clock';
import { DEFAULT_ROUTING_HEALTH_POLICY, effectiveState, type DestinationHealth, type HealthPolicy, type ManualOverride } from './health.ts';
import type { HealthStore } from './health-store.port.ts';
import type { Destination, DestinationKind, DestinationState } from './types.ts';

/** Probes one destination: true when it answered as alive within the time given. Never throws. */
export type Prober = (d: Destination, timeoutMs: number) => Promise<boolean>;

/** Probes in flight at once (a table may name hundreds of destinations). */
export const MAX_CONCURRENT_PROBES = 16;
/** Destinations probed per round at most (the rest wait for the next round, in turn). */
export const MAX_PROBES_PER_ROUND = 1000;

export interface HealthMonitorLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RoutingHealthMonitorOptions {
  readonly store: HealthStore;
  readonly clock: Clock;
  readonly probers: Partial<Record<DestinationKind, Prober>>;
  /** The destinations to watch now (the table in force; read at each round). */
  readonly destinations: () => Iterable<Destination>;
  /** Period of a probe round, ms. */
  readonly intervalMs: number;
  /** Longest wait for one probe's answer, ms (< intervalMs). */
  readonly timeoutMs: number;
  readonly policy?: HealthPolicy | undefined;
  readonly log: HealthMonitorLog;
}

/** A destination's effective state changed (seen here: this instance's event, or a refresh from the store). */
export type HealthChangeListener = (id: string, from: DestinationState, to: DestinationState) => void;

export class RoutingHealthMonitor {
  readonly #o: RoutingHealthMonitorOptions;
  readonly #policy: HealthPolicy;
  #snapshot = new Map<string, DestinationHealth>();
  readonly #listeners = new Set<HealthChangeListener>();
  #timer: TimerHandle | undefined;
  #round: Promise<void> | undefined;
  #cursor = 0;
  #closed = false;

  constructor(o: RoutingHealthMonitorOptions) {
    this.#o = o;
    this.#policy = o.policy ?? DEFAULT_ROUTING_HEALTH_POLICY;
  }

  /** What decisions use (DecideInputs.state): never reported on = active (the dispatcher's default). */
  readonly state = (id: string): DestinationState => {
    const h = this.#snapshot.get(id);
    return h === undefined ? 'active' : effectiveState(h);
  };

  health(id: string): DestinationHealth | undefined {
    return this.#snapshot.get(id);
  }

  /** Every destination something was recorded about (the rest are active). */
  all(): ReadonlyMap<string, DestinationHealth> {
    return this.#snapshot;
  }

  /**
   * Called when a destination's effective state changes as seen here (an event of this instance, or a
   * refresh bringing another instance's): a user of the states acts at once instead of at its next
   * periodic look (the cascade's upstream choice). Returns the unsubscribe.
   */
  onChange(listener: HealthChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A probe made elsewhere (the media plane's node probes and keepalives) counted against the same state. */
  async reportProbe(id: string, ok: boolean): Promise<void> {
    await this.#apply(id, { kind: 'probe', ok });
  }

  /** First refresh and round, then one round every intervalMs. */
  async start(): Promise<void> {
    await this.round();
    this.#schedule();
  }

  /** A caller's outcome with a destination (e.g. an upstream answering 5xx or not at all). */
  async reportBusiness(id: string, ok: boolean): Promise<void> {
    await this.#apply(id, { kind: 'business', ok });
  }

  /** Operator override: 'disabled' / 'enabled' stay until 'auto'; probing never undoes them. */
  async setManual(id: string, action: ManualOverride | 'auto'): Promise<DestinationHealth> {
    return this.#apply(id, { kind: 'manual', action });
  }

  /** Re-reads the shared state (called when another instance announces a change). */
  async refresh(): Promise<void> {
    try {
      this.#swap(await this.#o.store.all());
    } catch (err) {
      this.#o.log.warn({ err }, 'routing health not read; decisions keep the last known states');
    }
  }

  /** One probe of every watched destination that has a prober, then a refresh. Rounds never overlap. */
  round(): Promise<void> {
    this.#round ??= this.#roundOnce().finally(() => {
      this.#round = undefined;
    });
    return this.#round;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #apply(id: string, event: Parameters<HealthStore['apply']>[1]): Promise<DestinationHealth> {
    const before = this.#snapshot.get(id);
    const after = await this.#o.store.apply(id, event, this.#o.clock.now(), this.#policy);
    const next = new Map(this.#snapshot);
    next.set(id, after);
    const was = before === undefined ? 'active' : effectiveState(before);
    const now = effectiveState(after);
    if (was !== now) this.#o.log.info({ destinationId: id, from: was, to: now, event: event.kind }, 'routing destination state changed');
    this.#swap(next);
    return after;
  }

  /** Installs a new snapshot and tells the listeners of every effective state it changes. */
  #swap(next: Map<string, DestinationHealth>): void {
    const prev = this.#snapshot;
    this.#snapshot = next;
    if (this.#listeners.size === 0) return;
    const changes: [string, DestinationState, DestinationState][] = [];
    const stateIn = (m: Map<string, DestinationHealth>, id: string): DestinationState => {
      const h = m.get(id);
      return h === undefined ? 'active' : effectiveState(h);
    };
    for (const id of new Set([...prev.keys(), ...next.keys()])) {
      const from = stateIn(prev, id);
      const to = stateIn(next, id);
      if (from !== to) changes.push([id, from, to]);
    }
    for (const [id, from, to] of changes) {
      for (const l of this.#listeners) {
        try {
          l(id, from, to);
        } catch (err) {
          this.#o.log.warn({ err, destinationId: id }, 'routing health listener failed');
        }
      }
    }
  }

  async #roundOnce(): Promise<void> {
    const { probers, timeoutMs } = this.#o;
    const due: Destination[] = [];
    for (const d of this.#o.destinations()) if (probers[d.kind] !== undefined) due.push(d);
    // A bounded round: at most MAX_PROBES_PER_ROUND, taken in turn across rounds when there are more.
    const n = Math.min(due.length, MAX_PROBES_PER_ROUND);
    const start = due.length === 0 ? 0 : this.#cursor % due.length;
    const batch = Array.from({ length: n }, (_, i) => due[(start + i) % due.length]!);
    this.#cursor = start + n;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.length && !this.#closed) {
        const d = batch[next++]!;
        let ok = false;
        try {
          ok = await probers[d.kind]!(d, timeoutMs);
        } catch {
          ok = false; // a prober that throws is a failed probe
        }
        if (this.#closed) return;
        await this.#apply(d.id, { kind: 'probe', ok }).catch((err: unknown) =>
          this.#o.log.warn({ err, destinationId: d.id }, 'routing probe result not stored; the state stays as it was'),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT_PROBES, batch.length) }, worker));
    await this.refresh();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      void this.round().finally(() => this.#schedule());
    }, this.#o.intervalMs);
  }
}
