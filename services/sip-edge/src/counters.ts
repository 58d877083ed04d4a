// The edge's counters: plain numbers bumped on the forwarding path (an array slot per method and direction,
// no label lookup, no allocation), read by the Prometheus exposition at scrape time (metrics.ts). Every
// label comes from a fixed set, never from the message (a method name a device invents counts as `other`).

export const DIRECTIONS = ['device_to_shard', 'shard_to_device'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** Methods counted by name (RFC 3261 §27.4 and the GB/T 28181 ones); anything else is `other`. */
export const COUNTED_METHODS = ['REGISTER', 'MESSAGE', 'NOTIFY', 'SUBSCRIBE', 'INVITE', 'ACK', 'BYE', 'CANCEL', 'INFO', 'OPTIONS', 'other'] as const;
const METHOD_INDEX: ReadonlyMap<string, number> = new Map(COUNTED_METHODS.map((m, i) => [m, i]));
const OTHER = COUNTED_METHODS.length - 1;

/** Why the edge answered a request itself (or dropped it) instead of forwarding it. */
export const REFUSALS = ['flow_token', 'not_a_device', 'method', 'hops', 'no_shard', 'unknown_flow'] as const;
export type Refusal = (typeof REFUSALS)[number];

/**
 * `shard_link`: the TCP links to the shard had their bound of queued/unwritten messages (shard-links.ts);
 * `overload`: a new REGISTER while the edge's own receive queue (or event loop) is behind (overload.ts).
 */
export const SHED_BOUNDS = ['global', 'address', 'shard_link', 'overload'] as const;
export type ShedBound = (typeof SHED_BOUNDS)[number];

export class EdgeCounters {
  /** [direction][method] requests forwarded. */
  readonly requests: readonly Float64Array[] = DIRECTIONS.map(() => new Float64Array(COUNTED_METHODS.length));
  /** [direction] responses forwarded. */
  readonly responses = new Float64Array(DIRECTIONS.length);
  readonly refused = new Float64Array(REFUSALS.length);
  readonly shed = new Float64Array(SHED_BOUNDS.length);
  /** Devices' out-of-dialog requests placed on a shard (every one is a placement decision). */
  placed = 0;
  dropped = 0;
  sendErrors = 0;

  request(direction: 0 | 1, method: string): void {
    this.requests[direction]![METHOD_INDEX.get(method) ?? OTHER]!++;
  }

  response(direction: 0 | 1): void {
    this.responses[direction]!++;
  }

  refuse(reason: Refusal): void {
    this.refused[REFUSALS.indexOf(reason)]!++;
  }

  shedBy(bound: ShedBound): void {
    this.shed[SHED_BOUNDS.indexOf(bound)]!++;
  }
}
