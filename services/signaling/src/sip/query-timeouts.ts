// How long the platform waits for devices, per phase (STYLE 8). `request`: the SIP final response to
// our MESSAGE — shorter than Timer F (64×T1 = 32 s, RFC 3261 §17.1.2.2) so an operator is not kept
// waiting half a minute by a dead device; UDP retransmissions at 0.5/1/2/4 s still fit. The others
// wait for the MANSCDP Response(s) matched by SN.

export interface QueryTimeouts {
  readonly requestMs: number;
  readonly deviceInfoMs: number;
  readonly deviceStatusMs: number;
  /** Catalog: first Response, gap between Responses, whole answer. */
  readonly catalogFirstMs: number;
  readonly catalogNextMs: number;
  readonly catalogMaxMs: number;
  /** RecordInfo: first Response, gap between Responses, whole answer. */
  readonly recordFirstMs: number;
  readonly recordNextMs: number;
  readonly recordMaxMs: number;
}

export const DEFAULT_QUERY_TIMEOUTS: QueryTimeouts = Object.freeze({
  requestMs: 8_000,
  deviceInfoMs: 10_000,
  deviceStatusMs: 10_000,
  catalogFirstMs: 15_000,
  catalogNextMs: 10_000,
  catalogMaxMs: 120_000,
  // NVRs search their disks before answering; large answers come as dozens of MESSAGEs.
  recordFirstMs: 20_000,
  recordNextMs: 10_000,
  recordMaxMs: 180_000,
});
