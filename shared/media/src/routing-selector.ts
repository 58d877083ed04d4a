/**
 * Media node choice through the routing engine (SPEC §9 → §10). The rules' group is 'media', matched on
 * the channel code (its leading digits are the region: a published table can pin a province, a city or a
 * single channel to a set of nodes). While no published table has 'media' rules, the built-in table
 * reproduces the first selector (least-load-selector.ts) exactly: one set of every known node, least load
 * per unit of weight, sticky per live channel, active before probing, disabled and inactive never.
 *
 * Decisions are pure: the caller's candidates give health (disabled counts as inactive) and load; a
 * destination of a published table that is not a known node is treated as inactive.
 */
import { compileTable, type Decision, type DestinationState, type RoutingTable, type TableSource } from '@vms/routing';
import { MediaError } from './errors.ts';
import type { MediaNode } from './media-node.port.ts';
import type { MediaCandidate, MediaNodeSelector, MediaSelectRequest } from './media-selector.port.ts';

export const MEDIA_ROUTING_GROUP = 'media';
const DEFAULT_SET = 'media-default';

/** The built-in table over the known nodes (version 0: nothing published). */
export function defaultMediaTable(nodes: readonly MediaNode[], timeZone = 'UTC'): TableSource {
  const sorted = [...nodes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    version: 0,
    timeZone,
    destinations: sorted.map((n) => ({ id: n.id, kind: 'media', address: n.apiBaseUrl })),
    sets: [{ id: DEFAULT_SET, algorithm: 'least-load', members: sorted.map((n) => ({ destinationId: n.id, weight: n.weight, priority: 0 })) }],
    rules: sorted.length === 0 ? [] : [{ id: 1, group: MEDIA_ROUTING_GROUP, field: 'device', prefix: '', priority: 0, setId: DEFAULT_SET }],
  };
}

export interface RoutingMediaSelectorOptions {
  /** The published routing table in force (the reloader's), if any. */
  readonly published?: (() => RoutingTable | undefined) | undefined;
  readonly now?: () => number;
  /**
   * Shadow mode (SPEC §10): a candidate table that decides the same requests with the same health and load,
   * without acting; each pair of decisions goes to onShadow.
   */
  readonly shadow?: (() => RoutingTable | undefined) | undefined;
  readonly onShadow?: ((req: MediaSelectRequest, live: Decision, shadow: Decision) => void) | undefined;
}

export interface RoutingMediaSelector extends MediaNodeSelector {
  /** The decision alone, for the explain endpoint. */
  decide(req: MediaSelectRequest): Decision;
}

export function createRoutingMediaSelector(o: RoutingMediaSelectorOptions = {}): RoutingMediaSelector {
  const now = o.now ?? Date.now;
  // The built-in table depends on the node list (ids and weights): rebuilt when that changes, which is rare.
  let builtKey = '';
  let builtIn: RoutingTable | undefined;
  const defaults = (candidates: readonly MediaCandidate[]): RoutingTable => {
    const key = candidates.map((c) => `${c.node.id}\u0000${c.node.weight}`).sort().join('\u0001');
    if (builtIn === undefined || key !== builtKey) {
      const r = compileTable(defaultMediaTable(candidates.map((c) => c.node)));
      if (!r.ok) throw new MediaError('MEDIA_ERR_NO_NODE', `media node list does not make a routing table: ${r.issues[0]?.message ?? ''}`);
      builtIn = r.table;
      builtKey = key;
    }
    return builtIn;
  };

  const decide = (req: MediaSelectRequest): Decision => {
    const byId = new Map<string, MediaCandidate>();
    for (const c of req.candidates) byId.set(c.node.id, c);
    const published = o.published?.();
    const table = published !== undefined && published.matchRule({ group: MEDIA_ROUTING_GROUP, device: req.channelId, now: now() }) !== undefined ? published : defaults(req.candidates);
    const state = (id: string): DestinationState => {
      const c = byId.get(id);
      return c === undefined || !c.node.enabled ? 'inactive' : c.state;
    };
    const request = {
      group: MEDIA_ROUTING_GROUP,
      device: req.channelId,
      now: now(),
      sticky: req.purpose === 'live' ? req.currentNodeId : undefined,
      exclude: req.exclude,
    };
    const inputs = { state, load: (id: string) => byId.get(id)?.streams };
    const decision = table.decide(request, inputs);
    const shadow = o.shadow?.();
    if (shadow !== undefined && o.onShadow !== undefined) o.onShadow(req, decision, shadow.decide(request, inputs));
    return decision;
  };

  return {
    decide,
    select(req: MediaSelectRequest): MediaNode {
      const d = decide(req);
      const node = d.destination === undefined ? undefined : req.candidates.find((c) => c.node.id === d.destination!.id)?.node;
      if (node === undefined) {
        throw new MediaError('MEDIA_ERR_NO_NODE', `no enabled healthy media node for channel ${req.channelId} (${req.candidates.length} known)`);
      }
      return node;
    },
  };
}
