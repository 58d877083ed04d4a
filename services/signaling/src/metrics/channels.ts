// The signaling service's own hot-path events (STYLE 9): the code that does the work publishes one
// event, src/metrics subscribes. Publishing costs one property read while nobody listens. This file
// imports nothing but node:diagnostics_channel, so publishers do not depend on prom-client.
import diagnosticsChannel from 'node:diagnostics_channel';

export const SIGNALING_CHANNELS = Object.freeze({
  forward: 'vms.signaling.forward',
  apiFailure: 'vms.signaling.api_failure',
  catalogSync: 'vms.signaling.catalog_sync',
  sessionRecovery: 'vms.signaling.session_recovery',
});

/** One forward to a device's owner (cluster/forward-to-owner.ts), settled. */
export interface ForwardEvent {
  /** null: the owner answered (whatever its status); else the catalog code the caller got (4603, 4604). */
  errorCode: string | null;
  seconds: number;
}

/** An error envelope sent to an API caller (fastify's error handler or the edge). */
export interface ApiFailureEvent {
  errorCode: string;
}

/** A catalog sync started, stored its answer, or failed (sip/catalog-sync.ts). */
export interface CatalogSyncEvent {
  phase: 'started' | 'done' | 'failed';
  /** Channels stored by a finished sync; 0 otherwise. */
  items: number;
}

/** An orphaned session (SPEC §11) recovered, released, or its unusable index entry forgotten (recovery/session-recovery.ts). */
export interface SessionRecoveryEvent {
  outcome: 'recovered' | 'released' | 'forgotten';
  /** Constant text (recovery-decision.ts), never an id. '' for recovered. */
  reason: string;
}

const forward = diagnosticsChannel.channel(SIGNALING_CHANNELS.forward);
const sessionRecovery = diagnosticsChannel.channel(SIGNALING_CHANNELS.sessionRecovery);
const apiFailure = diagnosticsChannel.channel(SIGNALING_CHANNELS.apiFailure);
const catalogSync = diagnosticsChannel.channel(SIGNALING_CHANNELS.catalogSync);

export function publishForward(errorCode: string | null, startedMs: number): void {
  if (forward.hasSubscribers) forward.publish({ errorCode, seconds: (performance.now() - startedMs) / 1000 } satisfies ForwardEvent);
}

export function publishApiFailure(errorCode: string): void {
  if (apiFailure.hasSubscribers) apiFailure.publish({ errorCode } satisfies ApiFailureEvent);
}

export function publishCatalogSync(phase: CatalogSyncEvent['phase'], items = 0): void {
  if (catalogSync.hasSubscribers) catalogSync.publish({ phase, items } satisfies CatalogSyncEvent);
}

export function publishSessionRecovery(e: SessionRecoveryEvent): void {
  if (sessionRecovery.hasSubscribers) sessionRecovery.publish(e);
}
