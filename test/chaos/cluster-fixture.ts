// What the chaos files on real stores share, on top of test/integration/routing-cluster.ts (redis-server,
// mariadbd, signaling instances as child processes): simulated devices registered on a given instance,
// the rows they left in MySQL, the cascade leader each instance names, and control requests with a token.
import { ownershipKey } from '@vms/cluster';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { api, nodes, SERVER_ID, token, type Instance, type Stores } from '../integration/routing-cluster.ts';
import type { ControlRequest } from './load.ts';

/** A device-sim device registered on `instance`, keepalive every second, its catalog synced and stored. */
export async function deviceOn(stores: Stores, instance: Instance, deviceId: string, channels = 1): Promise<SimulatedDevice> {
  const device = createSimulatedDevice({
    server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID },
    deviceId,
    password: 'unused-no-challenge',
    channels,
    keepaliveIntervalS: 1,
  });
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 15_000, description: `${deviceId} registered on ${instance.code}` });
  // the REGISTER is answered before the claim is written (OWN-1): route to the device once it is
  await waitFor(async () => (await stores.redisClient.get(ownershipKey(deviceId))) === instance.code, {
    timeoutMs: 15_000,
    intervalMs: 50,
    description: `${deviceId} owned by ${instance.code}`,
  });
  const sync = await api(instance, `/vms/device/catalog/sync?deviceId=${deviceId}`, { method: 'POST' });
  if (!sync.json.success) throw new Error(`catalog sync of ${deviceId}: ${JSON.stringify(sync.json)}`);
  await waitFor(
    async () => {
      const [r] = await stores.pool.query('SELECT COUNT(*) AS n FROM gb_channel WHERE device_id = ?', [deviceId]);
      return Number((r as { n: number }[])[0]?.n ?? 0) >= channels;
    },
    { timeoutMs: 30_000, intervalMs: 100, description: `${channels} channels of ${deviceId} stored` },
  ).catch(async (err: unknown) => {
    const progress = await api(instance, `/vms/device/catalog/sync?deviceId=${deviceId}`).catch(() => null);
    throw new Error(`${deviceId} on ${instance.code}: catalog ${JSON.stringify(progress?.json.data ?? null)}`, { cause: err });
  });
  return device;
}

/** Every device and channel row, as `d:<id>` / `c:<device>/<channel>`. */
export async function sqlRows(stores: Stores): Promise<Set<string>> {
  const [devices] = await stores.pool.query('SELECT device_id FROM gb_device');
  const [channels] = await stores.pool.query('SELECT device_id, channel_id FROM gb_channel');
  return new Set([
    ...(devices as { device_id: string }[]).map((r) => `d:${r.device_id}`),
    ...(channels as { device_id: string; channel_id: string }[]).map((r) => `c:${r.device_id}/${r.channel_id}`),
  ]);
}

export const lost = (before: ReadonlySet<string>, after: ReadonlySet<string>): number => [...before].filter((r) => !after.has(r)).length;

/** The cascade leaders the instances name (one entry per distinct answer; null = no leader). */
export async function leadersNamed(instances: readonly Instance[]): Promise<Set<string | null>> {
  const named = await Promise.all(instances.map(async (i) => (await nodes(i)).cascadeLeader));
  return new Set(named);
}

/** Waits until every instance names `leader`; resolves with the time it took, ms. */
export async function leaderConverged(instances: readonly Instance[], leader: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  await waitFor(
    async () => {
      const named = await leadersNamed(instances);
      return named.size === 1 && named.has(leader);
    },
    { timeoutMs, intervalMs: 100, description: `every instance names ${leader} as cascade leader` },
  );
  return performance.now() - t0;
}

let bearer: string | undefined;

/** A control-API request for the load (token minted once per process). */
export async function controlRequestFactory(): Promise<(instance: Instance, path: string, label?: string) => ControlRequest> {
  bearer ??= `bearer ${await token()}`;
  const auth = bearer;
  return (instance, path, label) => ({ url: `${instance.httpUrl}${path}`, headers: { 'Blade-Auth': auth }, ...(label === undefined ? {} : { label }) });
}
