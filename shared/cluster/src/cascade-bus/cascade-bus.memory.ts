/**
 * In-process CascadeEventBus: standalone mode (CASC-5, where routing keeps everything local anyway)
 * and unit tests. Buses sharing a hub see each other's events, like instances on one Redis channel.
 * Messages go through the same JSON encoding as on Redis (events arrive by value, never as shared
 * objects) and are delivered on a later turn of the event loop (like a network hop), so a handler
 * that publishes never re-enters and a publisher never sees its event inside publish().
 */
import { StoreClosedError } from '../errors.ts';
import { CascadeBusCore } from './cascade-bus.core.ts';
import type { CascadeBusOptions, CascadeEventBus } from './cascade-bus.port.ts';

export interface MemoryCascadeHub {
  /** Buses attached to the hub. */
  readonly size: number;
}

interface HubInternals extends MemoryCascadeHub {
  readonly members: Set<(message: string) => void>;
}

export function createMemoryCascadeHub(): MemoryCascadeHub {
  const members = new Set<(message: string) => void>();
  const hub: HubInternals = {
    members,
    get size() {
      return members.size;
    },
  };
  return hub;
}

export interface MemoryCascadeBusOptions extends CascadeBusOptions {
  /** Default: a private hub (only this bus). */
  readonly hub?: MemoryCascadeHub;
}

export function createMemoryCascadeBus(opts: MemoryCascadeBusOptions): CascadeEventBus {
  const core = new CascadeBusCore(opts);
  const hub = (opts.hub ?? createMemoryCascadeHub()) as HubInternals;
  const receive = (message: string): void => core.deliver(message);
  hub.members.add(receive);
  let closed = false;
  return {
    async publish(data) {
      const event = core.envelope(data);
      if (closed) return core.dropped(event, new StoreClosedError('cascade bus is closed'));
      const text = core.encode(event, () => new RangeError('cascade event too large'));
      if (text === null) return;
      core.sent();
      for (const member of [...hub.members]) setImmediate(() => member(text));
    },
    subscribe: (handler) => core.subscribe(handler),
    stats: () => core.stats(),
    async close() {
      closed = true;
      hub.members.delete(receive);
      core.clearHandlers();
    },
  } satisfies CascadeEventBus;
}
