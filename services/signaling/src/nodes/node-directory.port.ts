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
}

export interface NodeListing {
  readonly nodes: readonly NodeView[];
  /** Node code of the cascade leader (CASC-1), null if no node is online. */
  readonly cascadeLeader: string | null;
}

export interface NodeDirectory {
  listNodes(): Promise<NodeListing>;
}
