/**
 * Hot reload of the routing table (SPEC §10; the version-polling of the Kamailio write-up §5.2): every
 * instance polls the store's current version every `pollMs`, and checks at once when nudged (a Redis
 * pub/sub message after a publish, see routing-nudge.redis.ts). A new version is loaded and compiled off
 * the hot path (in time slices: requests keep being served), then swapped in with one reference
 * assignment: a decision runs on the table it read at its start, the old one or the new one, never a mix.
 * A version that fails validation is refused: the old table stays, a warning is logged once per version,
 * and a `refused` event goes out on the diagnostics channel (metrics count it).
 */
import diagnostics from 'node:diagnostics_channel';
import type { Clock, TimerHandle } from '@vms/clock';
import { compileTable, type CompileResult } from './compile.ts';
import { compileStoredVersion } from './compile-stored.ts';
import type { RoutingStore } from './routing-store.port.ts';
import type { RoutingTable } from './table.ts';
import type { TableSource } from './types.ts';

/** diagnostics_channel name of reload events (ReloadEvent). */
export const ROUTING_RELOAD_CHANNEL = 'vms.routing.reload';
const channel = diagnostics.channel(ROUTING_RELOAD_CHANNEL);

export type ReloadOutcome = 'unchanged' | 'swapped' | 'refused' | 'failed';

export interface ReloadEvent {
  readonly outcome: Exclude<ReloadOutcome, 'unchanged'>;
  readonly version: number | undefined;
  /** Load + compile time. */
  readonly ms: number;
  readonly issues?: number;
}

export interface ReloadLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RoutingReloaderOptions {
  readonly store: Pick<RoutingStore, 'currentVersion' | 'readVersion'>;
  readonly clock: Clock;
  readonly timeZone: string;
  /** The table while nothing is published (version 0): the built-in behaviour. Must compile. */
  readonly defaults: Omit<TableSource, 'version' | 'timeZone'>;
  /** Poll period, ms. Default 5000. */
  readonly pollMs?: number;
  /** CPU per compile slice before yielding to the event loop, ms. Default 8. */
  readonly sliceMs?: number;
  readonly log: ReloadLog;
  /**
   * Builds a stored version (undefined when the store has no such version). Default: in time slices on
   * this thread (compileStoredVersion); createWorkerTableBuilder's `build` runs it on a worker thread.
   */
  readonly build?: (version: number, timeZone: string) => Promise<CompileResult | undefined>;
  /** Called after each swap (shadow comparison, health watch lists). */
  readonly onSwap?: (table: RoutingTable) => void;
}

export interface ReloadStats {
  readonly version: number;
  readonly swaps: number;
  readonly refused: number;
  readonly failures: number;
  /** Last version refused by validation (kept until a later version is accepted). */
  readonly refusedVersion: number | undefined;
}

export class RoutingReloader {
  readonly #o: RoutingReloaderOptions;
  readonly #pollMs: number;
  #table: RoutingTable;
  #timer: TimerHandle | undefined;
  #running: Promise<ReloadOutcome> | undefined;
  #again = false;
  #closed = false;
  #swaps = 0;
  #refused = 0;
  #failures = 0;
  #refusedVersion: number | undefined;

  constructor(options: RoutingReloaderOptions) {
    this.#o = options;
    this.#pollMs = options.pollMs ?? 5000;
    const r = compileTable({ ...options.defaults, version: 0, timeZone: options.timeZone });
    if (!r.ok) throw new Error(`routing defaults do not compile: ${r.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.#table = r.table;
  }

  /** The table in force. Read it once per decision. */
  get table(): RoutingTable {
    return this.#table;
  }

  get stats(): ReloadStats {
    return { version: this.#table.version, swaps: this.#swaps, refused: this.#refused, failures: this.#failures, refusedVersion: this.#refusedVersion };
  }

  /** First check (a store that is down leaves the defaults in force), then polling. */
  async start(): Promise<void> {
    await this.check();
    this.#schedule();
  }

  /** Checks at once (a nudge); checks already running coalesce into one more. */
  nudge(): void {
    void this.check();
  }

  check(): Promise<ReloadOutcome> {
    if (this.#closed) return Promise.resolve('unchanged');
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    const run = this.#checkOnce().finally(() => {
      this.#running = undefined;
      if (this.#again && !this.#closed) {
        this.#again = false;
        void this.check();
      }
    });
    this.#running = run;
    return run;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      void this.check().finally(() => this.#schedule());
    }, this.#pollMs);
  }

  async #checkOnce(): Promise<ReloadOutcome> {
    const { store, log } = this.#o;
    const started = performance.now();
    let version: number | undefined;
    try {
      version = await store.currentVersion();
      if (version === undefined || version === this.#table.version || version === this.#refusedVersion) return 'unchanged';
      const r = await (this.#o.build?.(version, this.#o.timeZone) ?? compileStoredVersion(store, version, this.#o.timeZone, this.#o.sliceMs ?? 8));
      if (r === undefined) throw new Error(`version ${version} is named current but not stored`);
      return this.#install(version, r, started);
    } catch (err) {
      this.#failures++;
      log.warn({ err, version }, 'routing table reload failed; the current table stays');
      channel.publish({ outcome: 'failed', version, ms: performance.now() - started } satisfies ReloadEvent);
      return 'failed';
    }
  }

  #install(version: number, r: CompileResult, started: number): ReloadOutcome {
    const { log } = this.#o;
    const ms = performance.now() - started;
    if (this.#closed) return 'unchanged';
    if (!r.ok) {
      this.#refused++;
      this.#refusedVersion = version;
      log.warn(
        { version, inForce: this.#table.version, issues: r.issues.slice(0, 10), issueCount: r.issues.length + r.more },
        'routing table refused: it does not validate; the current table stays',
      );
      channel.publish({ outcome: 'refused', version, ms, issues: r.issues.length + r.more } satisfies ReloadEvent);
      return 'refused';
    }
    const previous = this.#table.version;
    this.#table = r.table; // the swap
    this.#swaps++;
    this.#refusedVersion = undefined;
    log.info({ version, previous, rules: r.table.ruleCount, ms: Math.round(ms) }, 'routing table swapped in');
    channel.publish({ outcome: 'swapped', version, ms } satisfies ReloadEvent);
    this.#o.onSwap?.(r.table);
    return 'swapped';
  }
}
