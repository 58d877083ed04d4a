/**
 * First MediaNodeSelector: sticky per channel, then least load.
 *
 * 1. Sticky: if the channel's live stream already runs on a node that is enabled and not inactive,
 *    that node (viewers of one channel share one stream; a draining node keeps its streams).
 * 2. Otherwise the active node with the fewest streams per unit of weight; ties go to the larger
 *    weight, then the smaller id, so every instance decides the same way from the same inputs.
 * 3. No active node: the same rule among probing nodes (a node we could not confirm beats a
 *    certain failure). Nothing left: MEDIA_ERR_NO_NODE.
 */
import { MediaError } from './errors.ts';
import type { MediaNode } from './media-node.port.ts';
import type { MediaCandidate, MediaNodeSelector, MediaSelectRequest } from './media-selector.port.ts';

export function createLeastLoadSelector(): MediaNodeSelector {
  return { select: selectLeastLoad } satisfies MediaNodeSelector;
}

export function selectLeastLoad(req: MediaSelectRequest): MediaNode {
  const excluded = new Set(req.exclude ?? []);
  const usable = req.candidates.filter((c) => c.node.enabled && c.state !== 'inactive' && !excluded.has(c.node.id));
  if (req.currentNodeId !== undefined && req.purpose === 'live') {
    const sticky = usable.find((c) => c.node.id === req.currentNodeId);
    if (sticky !== undefined) return sticky.node;
  }
  const open = usable.filter((c) => c.node.weight > 0);
  const active = open.filter((c) => c.state === 'active');
  const best = leastLoaded(active.length > 0 ? active : open);
  if (best === undefined) {
    throw new MediaError('MEDIA_ERR_NO_NODE', `no enabled healthy media node for channel ${req.channelId} (${req.candidates.length} known)`);
  }
  return best.node;
}

function leastLoaded(cs: readonly MediaCandidate[]): MediaCandidate | undefined {
  let best: MediaCandidate | undefined;
  for (const c of cs) if (best === undefined || better(c, best)) best = c;
  return best;
}

function better(a: MediaCandidate, b: MediaCandidate): boolean {
  // compare streams/weight without division: a.streams / a.weight < b.streams / b.weight
  const la = a.streams * b.node.weight;
  const lb = b.streams * a.node.weight;
  if (la !== lb) return la < lb;
  if (a.node.weight !== b.node.weight) return a.node.weight > b.node.weight;
  return a.node.id < b.node.id;
}
