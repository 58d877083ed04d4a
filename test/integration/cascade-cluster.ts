// The set-up every cascade end-to-end test shares (SPEC §6): real redis-server and MariaDB, signaling
// instances as child processes, the test upstream platform (@vms/sip in this process,
// cascade-e2e-upstream.ts) and simulated devices (@vms/device-sim). `useCascadeCluster()` registers the
// suite's before/after hooks and tracks everything it starts, so a test only says what is particular
// to it; everything is stopped after the suite, whatever happened.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { PlatformRepository, SharedChannel } from '@vms/cascade';
import { createSimulatedDevice, type SimulatedDevice, type SimulatedDeviceOptions } from '@vms/device-sim';
import type { SipRequest } from '@vms/sip';
import { waitFor, type ServiceEnv } from '@vms/harness';
import { databaseWithPlatform, startTestUpstream, UPSTREAM_DOMAIN, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
import { api, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

export { UPSTREAM_DOMAIN, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
export { api, eventually, logLines, SERVER_ID, type Instance, type Stores } from './routing-cluster.ts';

/** Node heartbeat period, s; a node is online for 3 periods (NODE_ONLINE_WINDOW_HEARTBEATS). */
export const HEARTBEAT_S = 0.5;
export const CASCADE_ENV: ServiceEnv = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: String(HEARTBEAT_S), LOG_LEVEL: 'info' };
export const MANSCDP = 'Application/MANSCDP+xml';

/** A NOTIFY the upstream received in one of its subscription dialogs. */
export interface Notified {
  readonly kind: string;
  readonly fromPort: number;
  readonly body: string;
  readonly request: SipRequest;
}

export interface CascadeCluster {
  readonly stores: Stores;
  readonly upstream: TestUpstream;
  /** A fresh database with the schema and the upstream platform; `shares` (or `edit`) on its repository. */
  database(name: string, shares?: readonly SharedChannel[] | ((repo: PlatformRepository) => Promise<void>)): Promise<Stores>;
  /** A signaling instance on `stores` (default env CASCADE_ENV), stopped after the suite. */
  instance(stores: Stores, code: string, o?: { cascade?: boolean; env?: ServiceEnv }): Promise<Instance>;
  /** Waits until `leader` registered to the upstream. */
  registered(leader: Instance, timeoutMs?: number): Promise<void>;
  /** A device-sim device registered on `instance` with `channels` channels, its catalog synced and stored. */
  device(instance: Instance, deviceId: string, channels: number, extra?: Partial<SimulatedDeviceOptions>): Promise<SimulatedDevice>;
  /** Waits until `instance` lists at least `count` channels of the device. */
  channelsStored(instance: Instance, deviceId: string, count: number): Promise<void>;
  /** The upstream SUBSCRIBEs to `kind` at `leader`; the NOTIFYs of that dialog land in the returned array. */
  subscribe(leader: Instance, kind: 'Catalog' | 'Alarm' | 'MobilePosition', into?: Notified[]): Promise<Notified[]>;
  /** Anything else to stop after the suite (stand-ins, sockets), before the instances. */
  track(close: () => Promise<unknown>): void;
}

/** Shares of every listed channel of `deviceId`, placed under the platform's defaults. */
export function shares(deviceId: string, channelIds: readonly string[]): SharedChannel[] {
  return channelIds.map((channelId) => ({ deviceId, channelId, catalogGroupId: null, parentId: null }));
}

/** Registers before/after hooks on the current suite; call at describe level. */
export function useCascadeCluster(): CascadeCluster {
  let stores: Stores | undefined;
  let upstream: TestUpstream | undefined;
  const instances: Instance[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    stores = await startStores();
    upstream = await startTestUpstream();
  });
  after(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await Promise.all(instances.map((i) => i.proc.stop().catch(() => undefined)));
    await upstream?.close();
    await stores?.stop();
  });

  const need = <T>(v: T | undefined, what: string): T => {
    assert.ok(v !== undefined, `${what} not started (before hook failed?)`);
    return v;
  };

  const cluster: CascadeCluster = {
    get stores() {
      return need(stores, 'stores');
    },
    get upstream() {
      return need(upstream, 'upstream');
    },
    database(name, edit) {
      const run = typeof edit === 'function' ? edit : edit === undefined ? undefined : (repo: PlatformRepository) => repo.shareChannels(UPSTREAM_ID, edit);
      return databaseWithPlatform(cluster.stores, name, cluster.upstream, run);
    },
    async instance(s, code, o = {}) {
      const i = await startInstance(s, code, { cascade: o.cascade === true, env: { ...CASCADE_ENV, ...o.env } });
      instances.push(i);
      return i;
    },
    async registered(leader, timeoutMs = 10_000) {
      await waitFor(() => cluster.upstream.registersFrom(leader.sipPort).length > 0, { timeoutMs, intervalMs: 20, description: `${leader.code} registered upstream` });
    },
    async device(instance, deviceId, channels, extra = {}) {
      const device = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: 'unused-no-challenge', channels, ...extra });
      closers.push(() => device.close());
      await device.start();
      await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${deviceId} registered on ${instance.code}` });
      const sync = await api(instance, `/vms/device/catalog/sync?deviceId=${deviceId}`, { method: 'POST' });
      assert.equal(sync.json.success, true, JSON.stringify(sync.json));
      await cluster.channelsStored(instance, deviceId, channels);
      return device;
    },
    async channelsStored(instance, deviceId, count) {
      await waitFor(
        async () => {
          const d = (await api(instance, `/vms/channels?deviceId=${deviceId}&size=1000`)).json.data as { total?: number; records?: unknown[] } | unknown[];
          return (Array.isArray(d) ? d.length : (d.total ?? d.records?.length ?? 0)) >= count;
        },
        { timeoutMs: 20_000, intervalMs: 100, description: `${count} channels of ${deviceId} stored` },
      );
    },
    async subscribe(leader, kind, into = []) {
      const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>${kind}</CmdType>\r\n<SN>${kind.length}</SN>\r\n<DeviceID>${SERVER_ID}</DeviceID>\r\n</Query>\r\n`;
      const { dialog, response } = await cluster.upstream.stack.createUAC({
        method: 'SUBSCRIBE',
        uri: `sip:${SERVER_ID}@127.0.0.1:${leader.sipPort}`,
        headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>`, Event: kind, Expires: '3600' },
        body,
        contentType: MANSCDP,
        target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
      });
      assert.equal(response.status, 200);
      dialog.on('notify', (req, ctx) => {
        into.push({ kind, fromPort: ctx.flow.remotePort, body: req.body.toString('utf8'), request: req });
        ctx.reply(200);
      });
      return into;
    },
    track(close) {
      closers.push(close);
    },
  };
  return cluster;
}
