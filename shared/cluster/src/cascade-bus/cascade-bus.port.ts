/**
 * The cascade event bus (SPEC CASC-3, CASC-4): broadcast of cascade actions to every instance,
 * at most once. Publishing never fails the caller — a device uplink handler or a database
 * transaction must not break because Redis is away — so `publish` always resolves and a lost event
 * is only reported through `onProblem` and counted.
 */
import type { Clock } from '../clock.ts';
import type { CascadeDecodeFailure } from './cascade-codec.ts';
import type { CascadeEvent, CascadeEventData } from './cascade-event.ts';

export type CascadeEventHandler = (event: CascadeEvent) => void | Promise<void>;

export interface CascadeEventBus {
  /** Wraps `data` in an envelope (id, origin, time) and broadcasts it. Never rejects (CASC-4). */
  publish(data: CascadeEventData): Promise<void>;
  /** Every event on the channel, own ones included: receivers decide (routeCascadeAction). */
  subscribe(handler: CascadeEventHandler): () => void;
  stats(): CascadeBusStats;
  /** Idempotent. Later publishes are dropped (reported as publish-failed with StoreClosedError). */
  close(): Promise<void>;
}

export interface CascadeBusStats {
  /** Handed to the transport successfully. */
  readonly published: number;
  /** Publishes that failed and were dropped (CASC-4). */
  readonly dropped: number;
  /** Well-formed events received. */
  readonly received: number;
  /** Messages received and dropped because they could not be read. */
  readonly malformed: number;
  /** Handler calls that threw or rejected. */
  readonly handlerErrors: number;
}

/** Reported through `onProblem`; the bus logs nothing itself (STYLE §9: libraries do not log). */
export type CascadeBusProblem =
  /**
   * CASC-4: the event was dropped. `error`: OwnershipUnavailableError / OwnershipCommandError (Redis
   * unreachable or refusing), StoreClosedError (bus closed), RangeError (over MAX_CASCADE_MESSAGE_BYTES).
   */
  | { readonly kind: 'publish-failed'; readonly event: CascadeEvent; readonly error: unknown }
  | { readonly kind: 'malformed'; readonly reason: CascadeDecodeFailure; readonly detail: string; readonly bytes: number }
  | { readonly kind: 'handler-failed'; readonly event: CascadeEvent; readonly error: unknown }
  /** The subscriber connection is down (reported once per outage); it reconnects by itself. */
  | { readonly kind: 'subscriber-down'; readonly error: unknown };

export interface CascadeBusOptions {
  /** This instance's node code, written as `origin`. */
  readonly instanceId: string;
  /** Envelope time source. Default: the system clock. */
  readonly clock?: Pick<Clock, 'now'>;
  readonly onProblem?: (problem: CascadeBusProblem) => void;
}
