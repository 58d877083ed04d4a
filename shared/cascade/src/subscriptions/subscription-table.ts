/**
 * The upstream platforms' subscriptions the cascade leader holds (SPEC CASC-2, CASC-3; GB/T
 * 28181-2016 §9.7 event subscription, §9.11 catalog / mobile position): which SUBSCRIBE dialogs
 * exist, for what, until when. Pure bookkeeping — the dialog object is opaque here (a @vms/sip Dialog
 * in the service) and time comes from the injected clock; nothing is sent and no timer is armed.
 *
 * A subscription is keyed by its dialog (the caller's key, e.g. Call-ID + tags). A SUBSCRIBE inside
 * the dialog refreshes it with its new Expires; Expires 0 ends it (RFC 6665 §4.2.1.4). An entry whose
 * expiry has passed is never a notify target, even before `sweep()` removes it. The dialogs are local
 * to the leader's process: on losing the leadership the service calls `clear()` (the upstream
 * subscribes again to the new leader once its registration moved).
 */
import { CascadeError } from '../errors.ts';

export type SubscriptionKind = 'catalog' | 'alarm' | 'mobilePosition';

export interface SubscriptionEntry<D> {
  readonly key: string;
  /** Server id of the subscribing upstream platform. */
  readonly platformId: string;
  readonly kind: SubscriptionKind;
  readonly dialog: D;
  /** Clock time (ms) the subscription lapses at. */
  readonly expiresAt: number;
  readonly createdAt: number;
  /** SN of the SUBSCRIBE body that created or last refreshed it. */
  readonly sn?: string;
  /** MobilePosition only: the report interval the upstream asked for, seconds (§A.2.4). */
  readonly intervalS?: number;
}

export interface SubscribeRequest<D> {
  readonly key: string;
  readonly platformId: string;
  readonly kind: SubscriptionKind;
  readonly dialog: D;
  /** The SUBSCRIBE's Expires, seconds; 0 unsubscribes. */
  readonly expiresS: number;
  readonly sn?: string;
  readonly intervalS?: number;
}

export type SubscribeOutcome<D> =
  | { readonly type: 'created'; readonly entry: SubscriptionEntry<D> }
  | { readonly type: 'refreshed'; readonly entry: SubscriptionEntry<D> }
  /** Expires 0: the subscription (null if there was none) is gone; answer and send the final NOTIFY. */
  | { readonly type: 'removed'; readonly entry: SubscriptionEntry<D> | null };

export interface SubscriptionTableOptions {
  readonly clock: { now(): number };
  /** Longer Expires are shortened to this (the 2xx must then carry the granted value). Default 86 400 s. */
  readonly maxExpiresS?: number;
}

/** The kind of subscription a SUBSCRIBE body asks for, by its CmdType (§A.2.4); null for others. */
export function subscriptionKindOf(cmdType: string): SubscriptionKind | null {
  switch (cmdType.toLowerCase()) {
    case 'catalog':
      return 'catalog';
    case 'alarm':
      return 'alarm';
    case 'mobileposition':
      return 'mobilePosition';
    default:
      return null;
  }
}

export class SubscriptionTable<D> {
  readonly #clock: { now(): number };
  readonly #maxExpiresS: number;
  readonly #entries = new Map<string, SubscriptionEntry<D>>();

  constructor(opts: SubscriptionTableOptions) {
    this.#clock = opts.clock;
    this.#maxExpiresS = opts.maxExpiresS ?? 86_400;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Expires the 2xx should carry for a requested value. */
  grantedExpiresS(requestedS: number): number {
    return Math.min(requestedS, this.#maxExpiresS);
  }

  subscribe(req: SubscribeRequest<D>): SubscribeOutcome<D> {
    if (!Number.isInteger(req.expiresS) || req.expiresS < 0) throw new CascadeError('CASCADE_ERR_ARGUMENT', 'Expires must be a non-negative integer');
    const previous = this.#entries.get(req.key);
    if (req.expiresS === 0) {
      this.#entries.delete(req.key);
      return { type: 'removed', entry: previous ?? null };
    }
    const now = this.#clock.now();
    const live = previous !== undefined && previous.expiresAt > now;
    const entry: SubscriptionEntry<D> = {
      key: req.key,
      platformId: req.platformId,
      kind: req.kind,
      dialog: req.dialog,
      expiresAt: now + this.grantedExpiresS(req.expiresS) * 1000,
      createdAt: live ? previous.createdAt : now,
      ...(req.sn === undefined ? {} : { sn: req.sn }),
      ...(req.intervalS === undefined ? {} : { intervalS: req.intervalS }),
    };
    this.#entries.set(req.key, entry);
    return { type: live ? 'refreshed' : 'created', entry };
  }

  unsubscribe(key: string): SubscriptionEntry<D> | null {
    const e = this.#entries.get(key) ?? null;
    this.#entries.delete(key);
    return e;
  }

  /** A live subscription by its key; null when unknown or lapsed. */
  get(key: string): SubscriptionEntry<D> | null {
    const e = this.#entries.get(key);
    return e !== undefined && e.expiresAt > this.#clock.now() ? e : null;
  }

  /** Live subscriptions of this kind (optionally of one platform), oldest first: where a NOTIFY goes. */
  notifyTargets(kind: SubscriptionKind, platformId?: string): SubscriptionEntry<D>[] {
    const now = this.#clock.now();
    return [...this.#entries.values()]
      .filter((e) => e.kind === kind && e.expiresAt > now && (platformId === undefined || e.platformId === platformId))
      .sort((a, b) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Removes and returns the lapsed subscriptions. */
  sweep(): SubscriptionEntry<D>[] {
    const now = this.#clock.now();
    const gone: SubscriptionEntry<D>[] = [];
    for (const [key, e] of this.#entries) {
      if (e.expiresAt <= now) {
        this.#entries.delete(key);
        gone.push(e);
      }
    }
    return gone;
  }

  /** When the next subscription lapses (to arm one sweep timer); null when empty. */
  nextExpiryAt(): number | null {
    let next: number | null = null;
    for (const e of this.#entries.values()) if (next === null || e.expiresAt < next) next = e.expiresAt;
    return next;
  }

  /** A platform removed or disabled: its subscriptions go. */
  removePlatform(platformId: string): SubscriptionEntry<D>[] {
    const gone = [...this.#entries.values()].filter((e) => e.platformId === platformId);
    for (const e of gone) this.#entries.delete(e.key);
    return gone;
  }

  /** Leadership lost: every dialog belongs to a process that no longer serves the upstream. */
  clear(): SubscriptionEntry<D>[] {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    return all;
  }
}
