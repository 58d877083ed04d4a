// Shared set-up of the device placement integration tests (issue 14): redis-server, mariadbd, three
// signaling instances (node table heartbeat 0.5 s, so online window 1.5 s; register redirect on; a device
// password, so every registration passes digest), the SIP edge reading the node table, and the devices:
// device simulators (one SIP stack, one flow each), or many devices in one SIPp process (test/sipp/edge).
import { join } from 'node:path';
import { createMysqlNodeRegistry, ownershipKey } from '@vms/cluster';
import { createDeviceFleet, type DeviceFleet } from '@vms/device-sim';
import { compilePlacementRules, placeDevice, type Shard } from '@vms/routing';
import { createPolledShardSource, startEdge, type SipEdge } from '@vms/sip-edge';
import { freePort, runSipp, waitFor, writeInjectionCsv, type SippRun } from '@vms/harness';
import { silentLogger } from '@vms/sip';
import { REPO_ROOT, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

export const PASSWORD = 'edge-pass-1';
export const ONLINE_WINDOW_MS = 1500; // 3 heartbeats of 0.5 s (SPEC NODE-1)
export const POLL_MS = 200;
/** With `platformDefaults`: the default heartbeat of 5 s (3 beats = the online window) and the edge's default poll. */
export const DEFAULT_ONLINE_WINDOW_MS = 15_000;
export const DEFAULT_POLL_MS = 1000;
export const CODES = ['shard-a', 'shard-b', 'shard-c'] as const;
const POLICY = compilePlacementRules([]);

export interface PlacementCluster {
  readonly stores: Stores;
  readonly shards: ReadonlyMap<string, Instance>;
  readonly edge: SipEdge;
  /** null when started with `devices: 0` (the test brings its own) or with SIPp devices. */
  readonly fleet: DeviceFleet | null;
  /** The SIPp process holding the devices (`kind: 'sipp'`), else null. */
  readonly sipp: SippRun | null;
  readonly ids: readonly string[];
  /** ms the fleet took to start (every device's first REGISTER through the edge). */
  readonly startMs: number;
  /** The node table's online window and the edge's poll period this cluster runs with. */
  readonly onlineWindowMs: number;
  readonly pollMs: number;
  owners(list: readonly string[]): Promise<(string | null)[]>;
  close(): Promise<void>;
}

/** The shard placement picks for `id` among `codes`, all online (the pure decision the edge must realise). */
export const placedAmong = (codes: readonly string[], id: string): string =>
  placeDevice(POLICY, codes.map((code): Shard => ({ code, sipHost: '', sipPort: 1, group: 'default', online: true, draining: false })), id)?.code ?? 'none';

export interface PlacementClusterOptions {
  readonly devices: number;
  readonly firstId: string;
  readonly keepaliveS: number;
  /** More environment for every shard, and for one shard (e.g. the port a media stand-in sends hooks to). */
  readonly env?: Readonly<Record<string, string>>;
  readonly shardEnv?: (code: string) => Readonly<Record<string, string>>;
  /** The edge's transports; default UDP only. */
  readonly edgeTransports?: readonly ('udp' | 'tcp')[];
  /** How the edge reaches the shards; default UDP. */
  readonly edgeShardTransport?: 'udp' | 'tcp';
  /** Device simulators (default) or SIPp devices (test/sipp/edge/device.xml, all from one SIPp socket). */
  readonly kind?: 'sim' | 'sipp';
  /**
   * The shards with their default settings (keepalive interval and count, offline scan, node heartbeat 5 s)
   * and the edge with its default poll: `keepaliveS` is then only the devices' own keepalive period. Else
   * the fast test settings (heartbeat 0.5 s, the shards expecting `keepaliveS`).
   */
  readonly platformDefaults?: boolean;
}

const SIPP_DIR = join(REPO_ROOT, 'test', 'sipp', 'edge');
const REALM = SERVER_ID.slice(0, 10);
/** `count` consecutive 20-digit codes from `first`. */
export const deviceIds = (first: string, count: number): string[] => Array.from({ length: count }, (_, i) => String(BigInt(first) + BigInt(i)).padStart(20, '0'));

export async function startPlacementCluster(o: PlacementClusterOptions): Promise<PlacementCluster> {
  const stores = await startStores();
  const shards = new Map<string, Instance>();
  const defaults = o.platformDefaults === true;
  const onlineWindowMs = defaults ? DEFAULT_ONLINE_WINDOW_MS : ONLINE_WINDOW_MS;
  const pollMs = defaults ? DEFAULT_POLL_MS : POLL_MS;
  const fast = {
    VMS_GB28181_SIP_KEEPALIVE_INTERVAL: String(o.keepaliveS),
    VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT: '3',
    VMS_GB28181_SIP_OFFLINE_SCAN_PERIOD: '1',
    VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5',
  };
  const env = {
    VMS_GB28181_SIP_PASSWORD: PASSWORD,
    ...(defaults ? {} : fast),
    VMS_PLACEMENT_REDIRECT: 'true',
    LOG_LEVEL: 'info',
    ...o.env,
  };
  for (const code of CODES) shards.set(code, await startInstance(stores, code, { env: { ...env, ...o.shardEnv?.(code) } }));
  await waitForOnline(shards.get('shard-c')!, [...CODES]);
  const source = createPolledShardSource({ registry: createMysqlNodeRegistry(stores.pool), onlineWindowMs, pollMs, log: silentLogger });
  await source.refresh();
  const edge = await startEdge({
    code: 'edge-1',
    bindHost: '127.0.0.1',
    host: '127.0.0.1',
    port: 0,
    transports: o.edgeTransports ?? ['udp'],
    shardTransport: o.edgeShardTransport ?? 'udp',
    flowSecret: Buffer.alloc(32, 3),
    shards: source,
    // every test device, shard and SIPp shares 127.0.0.1: the per-address bound would be theirs together
    perAddressRequestsPerSec: o.kind === 'sipp' ? 1_000_000 : undefined,
    log: silentLogger,
  });
  const sipp = o.kind === 'sipp' && o.devices > 0 ? await startSippDevices(edge.port, o) : null;
  const fleet =
    o.devices === 0 || sipp !== null
      ? null
      : createDeviceFleet({
          server: { host: '127.0.0.1', port: edge.port, id: SERVER_ID },
          firstDeviceId: o.firstId,
          count: o.devices,
          password: PASSWORD,
          keepaliveIntervalS: o.keepaliveS,
          registerRetryMs: 500,
          startConcurrency: 30,
        });
  const t0 = Date.now();
  await fleet?.start();
  const ids = fleet?.devices.map((d) => d.deviceId) ?? (sipp === null ? [] : deviceIds(o.firstId, o.devices));
  const owners = (list: readonly string[]): Promise<(string | null)[]> => stores.redisClient.mget(...list.map((id) => ownershipKey(id)));
  // SIPp starts its calls at a rate: done when every device is owned somewhere
  if (sipp !== null) {
    try {
      await waitFor(async () => (await owners(ids)).every((x) => x !== null), { timeoutMs: 120_000, intervalMs: 500, description: `${ids.length} SIPp devices registered through the edge` });
    } catch (err) {
      // what a loaded machine did, for the report: where the devices are, what SIPp saw, what the edge shed
      const where = new Map<string, number>();
      for (const x of await owners(ids)) where.set(String(x), (where.get(String(x)) ?? 0) + 1);
      const result = await sipp.stop();
      await edge.close();
      await Promise.all([...shards.values()].map((x) => x.proc.stop()));
      await stores.stop();
      throw new Error(`${JSON.stringify(Object.fromEntries(where))}; SIPp ${JSON.stringify(result.stats)}; edge ${JSON.stringify(edge.stats())}\n${result.output}`, { cause: err });
    }
  }
  const startMs = Date.now() - t0;
  return {
    stores,
    shards,
    edge,
    fleet,
    sipp,
    ids,
    startMs,
    onlineWindowMs,
    pollMs,
    owners,
    async close() {
      await fleet?.close();
      await sipp?.stop();
      await edge.close();
      await Promise.all([...shards.values()].map((s) => s.proc.stop()));
      await stores.stop();
    },
  };
}

/** One SIPp process, `devices` devices (one call each) registering through the edge, then keeping alive. */
async function startSippDevices(edgePort: number, o: PlacementClusterOptions): Promise<SippRun> {
  const rows = deviceIds(o.firstId, o.devices).map((id) => [id, PASSWORD, `[authentication username=${id} password=${PASSWORD}]`]);
  return runSipp({
    scenario: join(SIPP_DIR, 'device.xml'),
    remote: `127.0.0.1:${edgePort}`,
    localPort: await freePort({ udp: true }),
    transport: 'u1',
    calls: o.devices,
    rate: 100,
    limit: o.devices,
    injectionFiles: [writeInjectionCsv(rows)],
    keys: { server_id: SERVER_ID, realm: REALM },
    // SIPP_TRACE=1: SIPp's message trace (-trace_msg) in the run's result (`messages`), to follow one device's calls
    traceMessages: process.env.SIPP_TRACE === '1',
    timeoutMs: 900_000,
    // a late answer (a shard shedding under load answers after the device gave up and went on) is ignored,
    // not the end of the device: -default_behaviors without abortunexp
    extraArgs: ['-default_behaviors', 'pingreply', '-oocsf', join(SIPP_DIR, 'device-ooc.xml'), '-auth_uri', `${SERVER_ID}@${REALM}`, '-d', String(o.keepaliveS * 1000)],
  });
}
