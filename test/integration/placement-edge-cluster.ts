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
}

const SIPP_DIR = join(REPO_ROOT, 'test', 'sipp', 'edge');
const REALM = SERVER_ID.slice(0, 10);
/** `count` consecutive 20-digit codes from `first`. */
export const deviceIds = (first: string, count: number): string[] => Array.from({ length: count }, (_, i) => String(BigInt(first) + BigInt(i)).padStart(20, '0'));

export async function startPlacementCluster(o: PlacementClusterOptions): Promise<PlacementCluster> {
  const stores = await startStores();
  const shards = new Map<string, Instance>();
  const env = {
    VMS_GB28181_SIP_PASSWORD: PASSWORD,
    VMS_GB28181_SIP_KEEPALIVE_INTERVAL: String(o.keepaliveS),
    VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT: '3',
    VMS_GB28181_SIP_OFFLINE_SCAN_PERIOD: '1',
    VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5',
    VMS_PLACEMENT_REDIRECT: 'true',
    LOG_LEVEL: 'info',
    ...o.env,
  };
  for (const code of CODES) shards.set(code, await startInstance(stores, code, { env: { ...env, ...o.shardEnv?.(code) } }));
  await waitForOnline(shards.get('shard-c')!, [...CODES]);
  const source = createPolledShardSource({ registry: createMysqlNodeRegistry(stores.pool), onlineWindowMs: ONLINE_WINDOW_MS, pollMs: POLL_MS, log: silentLogger });
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
  if (sipp !== null) await waitFor(async () => (await owners(ids)).every((x) => x !== null), { timeoutMs: 120_000, intervalMs: 500, description: `${ids.length} SIPp devices registered through the edge` });
  const startMs = Date.now() - t0;
  return {
    stores,
    shards,
    edge,
    fleet,
    sipp,
    ids,
    startMs,
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
    traceMessages: false,
    timeoutMs: 900_000,
    // a late answer (a shard shedding under load answers after the device gave up and went on) is ignored,
    // not the end of the device: -default_behaviors without abortunexp
    extraArgs: ['-default_behaviors', 'pingreply', '-oocsf', join(SIPP_DIR, 'device-ooc.xml'), '-auth_uri', `${SERVER_ID}@${REALM}`, '-d', String(o.keepaliveS * 1000)],
  });
}
