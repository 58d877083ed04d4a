// The node table as the API shows it (SPEC NODE-1, NODE-2, CASC-1). Standalone: this node only.

export interface NodeView {
  readonly nodeCode: string;
  /** External SIP address, `host:port`. */
  readonly sipAddress: string;
  readonly internalBaseUrl: string;
  readonly cascadeNode: boolean;
  readonly online: boolean;
  readonly onlineDeviceCount: number;
  readonly startedAt: number;
  readonly lastHeartbeatAt: number;
  readonly version: string;
  /** Placement gives it no device (issue 14): drained by an operator, or stopping. */
  readonly draining: boolean;
  /** Paced drain progress, 0..1: the share of its devices placement has released (0 when not draining). */
  readonly drainedShare: number;
  /** Paced return progress after an undrain, 0..1: the share of its devices given back so far (1 when not returning). */
  readonly joinedShare: number;
}

export interface NodeListing {
  readonly nodes: readonly NodeView[];
  /** Node code of the cascade leader (CASC-1), null if no node is online. */
  readonly cascadeLeader: string | null;
}

export interface NodeDirectory {
  listNodes(): Promise<NodeListing>;
  /**
   * Operator drain (issue 14); resolves null for a node the table does not know (or no table), else the
   * period applied. Paced over `periodMs`; absent = the devices that move at `vms.placement.drain-rate` per
   * second: a drain releases the node's online devices, an undrain gives it back its share of its group's.
   */
  setDraining(nodeCode: string, draining: boolean, periodMs?: number): Promise<number | null>;
}
