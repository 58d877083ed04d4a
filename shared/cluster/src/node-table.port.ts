/**
 * The signaling node table (SPEC §5): one row per instance, upserted at start and on every node
 * heartbeat. "Online" is decided by the database clock (NODE-1), so instances with skewed local
 * clocks still agree on who is online, and therefore on the cascade leader (CASC-1).
 */
export interface NodeInfo {
  /** instance-id: unique, stable across restarts (SPEC §2). */
  readonly code: string;
  readonly sipHost: string;
  readonly sipPort: number;
  readonly internalBaseUrl: string;
  /** This instance volunteers for the cascade role. */
  readonly cascadeNode: boolean;
  readonly startedAt: Date;
  readonly version: string;
  /** Device placement (issue 14): the shard group (region) this instance serves; `default` when absent. */
  readonly placementGroup?: string;
}

export interface NodeRow extends NodeInfo {
  readonly lastHeartbeat: Date;
  /** NODE-2: devices this node reported as online at its last heartbeat. */
  readonly onlineDeviceCount: number;
  /** last heartbeat within the online window, judged by the store's own clock. */
  readonly online: boolean;
  /**
   * For an online row: how long until its last heartbeat leaves the online window, on the store's clock at
   * read time (0 when offline). A reader can look again exactly then instead of at its next heartbeat, so a
   * dead node (a dead cascade leader) is noticed one window after its last beat, not up to a beat later.
   */
  readonly offlineInMs: number;
  /**
   * Placement takes no device to this node (issue 14): an operator drained it (`setDraining`), or it is
   * stopping on purpose (`leave`, until the restarted process's next heartbeat). Devices placed on it move
   * at their next registration.
   */
  readonly draining: boolean;
  /**
   * Progress of a paced drain (issue 14), 0..1 on the store's clock at read time: the share of the node's
   * devices placement has released (elapsed / period since the drain started). 0 when not draining, 1 when
   * stopping or drained without a period (everything leaves at once).
   */
  readonly drainedShare: number;
  /**
   * Progress of a paced return (issue 14), 0..1 on the store's clock at read time: the share of the devices
   * an undrained node takes back given back so far. 1 when not returning (or returned without a period).
   */
  readonly joinedShare: number;
  /**
   * How far the node's drain had got when it was undrained (1 = finished): placement gives it back the
   * devices below that slot paced by joinedShare; those at or above it never left. 1 when not returning.
   */
  readonly joinFrom: number;
  /** The node's placement group (`default` unless configured). */
  readonly placementGroup: string;
}

/** Longest drain period a node table stores: a day. */
export const MAX_DRAIN_PERIOD_MS = 86_400_000;

export interface NodeRegistry {
  /** Upsert own row; last heartbeat = the store's current time. */
  heartbeat(self: NodeInfo, onlineDeviceCount: number): Promise<void>;
  /** Every known node (online or not), ordered by code. */
  listNodes(onlineWindowMs: number): Promise<NodeRow[]>;
  getNode(code: string, onlineWindowMs: number): Promise<NodeRow | null>;
  /**
   * This node stops on purpose: its row reads offline at once (kept in the listing, last heartbeat
   * unchanged) until its next heartbeat. Unknown codes are ignored.
   */
  leave(code: string): Promise<void>;
  /**
   * Operator drain (issue 14): kept across heartbeats and restarts until undrained. Resolves whether the
   * node is known. Draining with `periodMs` > 0 paces it: the node's devices are released evenly over that
   * period from the drain's start (a drain already under way keeps its start); 0 releases them all at once.
   * Undraining a draining node with `periodMs` > 0 paces its return the same way (joinedShare); undraining
   * a node that is not draining changes nothing.
   */
  setDraining(code: string, draining: boolean, periodMs?: number): Promise<boolean>;
  /** Idempotent; later calls reject with StoreClosedError. Does not close a pool it was given. */
  close(): Promise<void>;
}
