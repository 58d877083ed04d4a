// Shared set-up of the owner-routing integration tests and the forward bench: a real redis-server and
// mariadbd, signaling instances as child processes (`npm run signaling` entry point, configured through
// the SPEC §12 environment variables), and helpers to seed devices and ownership and to call the API.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMysqlPool, ownershipKey } from '@vms/cluster';
import { signToken } from '@vms/signaling';
import { Redis } from 'ioredis';
import type { Pool } from 'mysql2/promise';
import {
  freePort,
  runSipp,
  startMariaDb,
  startRedis,
  startService,
  tsxArgs,
  waitFor,
  type MariaDbServer,
  type RedisServer,
  type ServiceEnv,
  type ServiceProcess,
  type SippRun,
} from '@vms/harness';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(REPO_ROOT, 'services', 'signaling', 'src', 'main.ts');
const DEVICE_SCENARIO = join(REPO_ROOT, 'test', 'sipp', 'routing', 'gb-device.xml');
const DEVICE_OOC_SCENARIO = join(REPO_ROOT, 'test', 'sipp', 'routing', 'gb-device-ooc.xml');
export const SERVER_ID = '34020000002000000001';

export const SIGNING_KEY = 'routing-integration-signing-key-0123456789';
export const SECRET = 'a8f3k29slx7q';
export const TENANT = '000000';

export interface Stores {
  readonly redis: RedisServer;
  readonly db: MariaDbServer;
  readonly mysqlUrl: string;
  /** For seeding device rows. */
  readonly pool: Pool;
  /** For seeding / inspecting ownership keys. */
  readonly redisClient: Redis;
  stop(): Promise<void>;
}

export async function startStores(): Promise<Stores> {
  const [redis, db] = await Promise.all([startRedis(), startMariaDb()]);
  const mysqlUrl = await db.createDatabase('vms');
  const pool = createMysqlPool(mysqlUrl, { connectionLimit: 2 });
  const redisClient = new Redis({ host: redis.host, port: redis.port, maxRetriesPerRequest: 1, lazyConnect: false });
  redisClient.on('error', () => undefined); // the tests stop Redis on purpose
  return {
    redis,
    db,
    mysqlUrl,
    pool,
    redisClient,
    async stop() {
      redisClient.disconnect();
      await pool.end().catch(() => undefined);
      await Promise.all([redis.stop(), db.stop()]);
    },
  };
}

export interface InstanceOptions {
  /** null: no node-forward-secret. Default SECRET. */
  readonly secret?: string | null;
  readonly cascade?: boolean;
  /** Extra environment (timings, log level). */
  readonly env?: ServiceEnv;
  /** Extra Node options before the entry point (the forward bench's `--cpu-prof`). */
  readonly nodeArgs?: readonly string[];
}

export interface Instance {
  readonly code: string;
  readonly httpUrl: string;
  readonly httpPort: number;
  readonly sipPort: number;
  readonly proc: ServiceProcess;
}

/** Starts one signaling instance on 127.0.0.1 and waits until it answers /healthz. */
export async function startInstance(stores: Stores, code: string, o: InstanceOptions = {}): Promise<Instance> {
  const secret = o.secret === undefined ? SECRET : o.secret;
  const proc = await startService({
    name: code,
    cwd: REPO_ROOT,
    args: [...(o.nodeArgs ?? []), ...tsxArgs(MAIN)],
    env: async () => {
      const httpPort = await freePort();
      const sipPort = await freePort({ udp: true });
      return {
        SERVER_ADDRESS: '127.0.0.1',
        SERVER_PORT: String(httpPort),
        VMS_GB28181_SIP_HOST: '127.0.0.1',
        VMS_GB28181_SIP_PORT: String(sipPort),
        VMS_GB28181_SIP_INSTANCE_ID: code,
        VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${httpPort}`,
        VMS_GB28181_SIP_NODE_FORWARD_SECRET: secret ?? undefined,
        VMS_GB28181_SIP_CASCADE_NODE: o.cascade === true ? 'true' : 'false',
        VMS_AUTH_SIGNING_KEY: SIGNING_KEY,
        REDIS_URL: stores.redis.url,
        MYSQL_URL: stores.mysqlUrl,
        LOG_LEVEL: 'debug',
        ...o.env,
      };
    },
    healthUrl: (env) => `http://127.0.0.1:${env.SERVER_PORT}/healthz`,
    startTimeoutMs: 60_000,
  });
  const httpPort = Number(proc.env.SERVER_PORT);
  return { code, httpUrl: `http://127.0.0.1:${httpPort}`, httpPort, sipPort: Number(proc.env.VMS_GB28181_SIP_PORT), proc };
}

/** A device row as REGISTER would leave it: online, default tenant. */
export async function seedDevice(stores: Stores, deviceId: string, tenantId = TENANT): Promise<void> {
  await stores.pool.query(
    `INSERT INTO gb_device (device_id, tenant_id, online, keepalive_at, registered_at, created_at, updated_at)
     VALUES (?, ?, 1, NOW(3), NOW(3), NOW(3), NOW(3))
     ON DUPLICATE KEY UPDATE online = 1, keepalive_at = NOW(3)`,
    [deviceId, tenantId],
  );
}

/** owner(deviceId) = node, as the owner's REGISTER / keepalive would write it (OWN-1). */
export async function seedOwner(stores: Stores, deviceId: string, node: string, ttlMs = 600_000): Promise<void> {
  await stores.redisClient.set(ownershipKey(deviceId), node, 'PX', ttlMs);
}

const tokens = new Map<string, Promise<string>>();

/** A token of `tenantId` (with the all-tenant operator role if asked), signed once per test process (valid for an hour). */
export function token(tenantId = TENANT, role: 'tenant' | 'operator' = 'tenant'): Promise<string> {
  let t = tokens.get(`${tenantId}/${role}`);
  if (t === undefined) {
    t = signToken({ tenantId, userId: 'it', ttlSec: 3600, role }, SIGNING_KEY, Date.now());
    tokens.set(`${tenantId}/${role}`, t);
  }
  return t;
}

export interface ApiAnswer {
  readonly status: number;
  readonly type: string | null;
  readonly bytes: Buffer;
  readonly json: { code: number; success: boolean; msg: string; data: unknown };
  readonly ms: number;
}

export async function api(
  instance: { httpUrl: string },
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number; token?: string } = {},
): Promise<ApiAnswer> {
  const auth = `bearer ${init.token ?? (await token())}`;
  const t0 = performance.now();
  const res = await fetch(`${instance.httpUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'Blade-Auth': auth, ...init.headers },
    signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const ms = performance.now() - t0;
  return { status: res.status, type: res.headers.get('content-type'), bytes, json: JSON.parse(bytes.toString('utf8')) as ApiAnswer['json'], ms };
}

interface NodeListing {
  cascadeLeader: string | null;
  nodes: { nodeCode: string; online: boolean; onlineDeviceCount: number; self: boolean; internalBaseUrl: string }[];
}

/** GET /vms/nodes on `instance` (the operator role only, SPEC SEC-2). */
export async function nodes(instance: { httpUrl: string }): Promise<NodeListing> {
  return (await api(instance, '/vms/nodes', { token: await token(TENANT, 'operator') })).json.data as NodeListing;
}

/** Waits until `instance` sees exactly `online` as the online nodes. */
export async function waitForOnline(instance: { httpUrl: string }, online: readonly string[], timeoutMs = 20_000): Promise<NodeListing> {
  const want = [...online].sort().join(',');
  return waitFor(
    async () => {
      const l = await nodes(instance);
      const got = l.nodes.filter((n) => n.online).map((n) => n.nodeCode).sort().join(',');
      return got === want ? l : null;
    },
    { timeoutMs, intervalMs: 100, description: `online nodes = ${want}` },
  );
}

/**
 * Waits until `check` holds on the instance's log: child output arrives through a pipe, possibly after
 * the HTTP answer that followed it.
 */
export async function eventually(check: () => boolean, description: string, timeoutMs = 3000): Promise<void> {
  await waitFor(() => check(), { timeoutMs, intervalMs: 20, description });
}

/** Log lines (pino JSON) of an instance whose `msg` is `msg`. */
export function logLines(instance: Instance, msg: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of instance.proc.output().split('\n')) {
    if (!line.includes(msg)) continue;
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec.msg === msg) out.push(rec);
    } catch {
      // not a JSON line
    }
  }
  return out;
}

export interface SimDevice {
  readonly deviceId: string;
  readonly sipp: SippRun;
  /** Ends the device's SIPp (no unregister: as if the camera lost power). */
  stop(): Promise<void>;
}

/**
 * A GB28181 device (SIPp, test/sipp/routing/gb-device.xml) registering on `instance` and sending a
 * Keepalive every `keepaliveMs`; it answers the platform's MESSAGEs (DeviceInfo with a Response).
 * Resolves once the instance has claimed it in Redis (OWN-1).
 */
export async function startDevice(stores: Stores, instance: Instance, deviceId: string, keepaliveMs = 1000): Promise<SimDevice> {
  const sipp = runSipp({
    scenario: DEVICE_SCENARIO,
    remote: `127.0.0.1:${instance.sipPort}`,
    // SIPp binds 5060 by default with SO_REUSEADDR: two devices would silently share the port
    localPort: await freePort({ udp: true }),
    calls: 1,
    transport: 'u1',
    keys: { device_id: deviceId, server_id: SERVER_ID, realm: SERVER_ID.slice(0, 10) },
    extraArgs: ['-oocsf', DEVICE_OOC_SCENARIO, '-d', String(keepaliveMs)],
    traceMessages: process.env.SIPP_KEEP_LOGS !== undefined,
    timeoutMs: 30 * 60_000,
  });
  const device: SimDevice = {
    deviceId,
    sipp,
    async stop() {
      await sipp.kill();
    },
  };
  try {
    await waitFor(async () => (await stores.redisClient.get(ownershipKey(deviceId))) === instance.code, {
      timeoutMs: 15_000,
      intervalMs: 50,
      description: `${deviceId} owned by ${instance.code}`,
    });
  } catch (err) {
    const r = await sipp.kill();
    throw new Error(`device ${deviceId} did not register on ${instance.code}: ${r.output}\n${r.errors}`, { cause: err });
  }
  return device;
}
