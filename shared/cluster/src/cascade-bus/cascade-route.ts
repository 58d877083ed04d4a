/**
 * Where a cascade action runs (SPEC CASC-3, CASC-5; reference §6.2). Two kinds of "right instance":
 *  - a NOTIFY to an upstream platform (catalog, alarm, mobile position), and a device's Response to an
 *    upstream's query, leave from the cascade leader: the upstream's subscription dialog and registration
 *    exist only in the leader's process;
 *  - a control from an upstream to a device leaves from that device's owner: the device accepts
 *    requests only from the address it registered to.
 *
 * At the trigger: the right instance executes locally, any other publishes the action. At receipt
 * (every instance receives every event, its own included): the right instance — judged now, not when
 * it was published, so a leadership or ownership move in flight is followed — executes; the others
 * skip silently. When the trigger does not know the right instance (leader not read yet, owner key
 * missing) it publishes: an instance that knows it is the right one will act, the rest skip.
 *
 * Single instance: pass `leaderId = selfId` and `ownerOf = () => selfId` (ROUTE-8); then every action
 * is local and nothing is ever published (CASC-5).
 */
import type { CascadeEvent, CascadeEventKind } from './cascade-event.ts';

export type CascadeRouteStage = 'trigger' | 'receipt';
export type CascadeRoute = 'local' | 'publish' | 'skip';

export type CascadeAction =
  | { readonly stage: CascadeRouteStage; readonly kind: Exclude<CascadeEventKind, 'control.upstream'> }
  | { readonly stage: CascadeRouteStage; readonly kind: 'control.upstream'; readonly targetDeviceId: string };

export interface CascadeRouteContext {
  readonly selfId: string;
  /** Current cascade leader (LeadershipTracker); null while unknown. */
  readonly leaderId: string | null;
  /** Current owner of a device; null when unknown (offline, or the lookup failed). */
  readonly ownerOf: (deviceId: string) => string | null;
}

export function routeCascadeAction(action: CascadeAction, ctx: CascadeRouteContext): CascadeRoute {
  const responsible = action.kind === 'control.upstream' ? ctx.ownerOf(action.targetDeviceId) : ctx.leaderId;
  if (responsible === ctx.selfId) return 'local';
  return action.stage === 'trigger' ? 'publish' : 'skip';
}

/** The receipt-stage action of a delivered event. */
export function receivedAction(event: CascadeEvent): CascadeAction {
  if (event.kind === 'control.upstream') return { stage: 'receipt', kind: event.kind, targetDeviceId: event.payload.targetDeviceId };
  return { stage: 'receipt', kind: event.kind };
}
