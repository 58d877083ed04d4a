/**
 * SPEC CASC-1: the cascade leader is the smallest node code among online nodes flagged
 * `cascade_node`; failing that the smallest among all online nodes; failing that this node.
 * Pure and deterministic: every instance runs it on the same node table and reaches the same answer
 * without talking to the others.
 */
export interface ElectionCandidate {
  readonly code: string;
  readonly online: boolean;
  readonly cascadeNode: boolean;
}

export function electCascadeLeader(nodes: readonly ElectionCandidate[], selfCode: string): string {
  let flagged: string | undefined;
  let anyOnline: string | undefined;
  for (const n of nodes) {
    if (!n.online) continue;
    if (anyOnline === undefined || codeLess(n.code, anyOnline)) anyOnline = n.code;
    if (n.cascadeNode && (flagged === undefined || codeLess(n.code, flagged))) flagged = n.code;
  }
  return flagged ?? anyOnline ?? selfCode;
}

/**
 * "Smallest" is ordinal (UTF-16 code unit) order: locale-independent, so a node with a different
 * ICU or LANG cannot disagree, and never case-folded, since node codes are case-sensitive keys.
 */
export function codeLess(a: string, b: string): boolean {
  return a < b;
}

export function compareCodes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
