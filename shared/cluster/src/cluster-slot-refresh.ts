/**
 * Ends ioredis's periodic slot refresh for good once a Cluster client is closed.
 *
 * ioredis 5.11 runs `slotsRefreshInterval` as a chain of timeouts: each round's refresh, when it
 * completes, arms the next. `disconnect()` / `quit()` clear the armed timeout, but a round whose refresh
 * is in flight at that moment arms a new one when its (failed) refresh completes, and from then on a
 * ref'd timer refreshes a closed client every interval, forever: the process never exits by itself.
 * Found by a test file that did not exit (2 runs in 24 under load, the close landing mid-refresh).
 * Guard: a refresh asked of a client its owner closed does nothing, so the chain stops at its next round.
 */
import type { Cluster } from 'ioredis';

/** Statuses of a client that is not (re)connecting: a refresh then has nothing to serve. */
const CLOSED = new Set(['disconnecting', 'close', 'end']);

export function endSlotRefreshOnClose(cluster: Cluster): void {
  const refresh = cluster.refreshSlotsCache.bind(cluster);
  // ioredis's own flag for disconnect()/quit() (a dropped connection reconnects without it). It stays
  // set until a later connect() has refreshed, and connect() first moves the status to 'connecting'.
  const state = cluster as unknown as { manuallyClosing?: boolean };
  cluster.refreshSlotsCache = (callback) => {
    // the callback is not called: no further round is armed
    if (state.manuallyClosing === true && CLOSED.has(cluster.status)) return;
    refresh(callback);
  };
}
