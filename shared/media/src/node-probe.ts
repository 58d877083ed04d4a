/**
 * The pure part of media node API probes (SPEC §10 "health from probes"; node-health.ts holds the
 * states). The signaling service runs the loop: every period it asks `probeTargets` which nodes to
 * call, calls each one's `getServerConfig` with the node secret, and feeds `judgeProbe`'s verdict to
 * NodeHealthTracker.result.
 *
 *  - only enabled nodes are probed (a disabled node is never chosen, its health does not matter);
 *  - a node is probed when nothing confirmed it lately (NodeHealthTracker.dueForProbe: no keepalive
 *    or probe success within probeAfterMs, or not active), so nodes whose keepalive hooks reach this
 *    instance are never probed;
 *  - a node with a probe still in flight is not probed again (a hung node costs one call at a time).
 */
import { isMediaError } from './errors.ts';
import type { MediaNode } from './media-node.port.ts';

/** What a probe call produced: the node's configuration, or what it rejected with. */
export type ProbeOutcome = { readonly config: Readonly<Record<string, string>> } | { readonly error: unknown };

export type ProbeVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Ids of the nodes to probe now, in the order given. */
export function probeTargets(
  nodes: readonly Pick<MediaNode, 'id' | 'enabled'>[],
  due: (nodeId: string) => boolean,
  inFlight: ReadonlySet<string>,
): string[] {
  return nodes.filter((n) => n.enabled && !inFlight.has(n.id) && due(n.id)).map((n) => n.id);
}

/**
 * A probe succeeds when the node answered its configuration with our secret and, if the answer names
 * a mediaServerId, it is this node's (another ZLM behind the configured URL cannot take our streams).
 * Every failure — unreachable, timeout, wrong secret (ZLM code -100), an answer that is not ZLM's
 * envelope, even an unexpected exception — is a failed probe, never a crash.
 */
export function judgeProbe(nodeId: string, outcome: ProbeOutcome): ProbeVerdict {
  if ('error' in outcome) {
    return { ok: false, reason: isMediaError(outcome.error) ? outcome.error.code : 'unexpected error' };
  }
  const id = outcome.config['general.mediaServerId'];
  if (id !== undefined && id !== '' && id !== nodeId) return { ok: false, reason: `answered as media node ${JSON.stringify(id.slice(0, 64))}` };
  return { ok: true };
}
