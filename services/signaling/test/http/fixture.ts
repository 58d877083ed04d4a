// HTTP-layer test fixture: the real fastify app, real auth and the memory repository; the live-control
// port is a recording fake (a port test double, for HTTP-layer tests only).
import { pino } from 'pino';
import { signToken } from '../../src/auth/jwt.ts';
import type {
  CatalogProgress,
  ChannelRef,
  DeviceAction,
  DeviceControlService,
  PtzCommand,
  RecordQueryResult,
  TimeRange,
} from '../../src/control/device-control.port.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import type { ChannelInput } from '../../src/devices/device.types.ts';
import { RecordQueryNotFoundError } from '../../src/errors/catalog.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { EdgeRouting, HttpDeps, OwnerRoutingHook } from '../../src/http/handler.types.ts';
import { createStandaloneNodeDirectory } from '../../src/nodes/node-directory.standalone.ts';
import { createSelfOwnerDirectory } from '../../src/ownership/owner-directory.standalone.ts';

export const KEY = 'test-signing-key-0123456789abcdef';
export const NOW = Date.UTC(2025, 5, 1, 0, 0, 0);
export const NODE = 'node-a';
export const DEV = '34020000001320000001';
export const DEV_OFFLINE = '34020000001320000002';
export const DEV_OTHER_TENANT = '34020000001320000003';
export const CH = '34020000001310000001';
export const CH_OTHER_TENANT = '34020000001310000003';
export const TENANT = '000000';
export const OTHER_TENANT = '100001';

export type ControlCall = { op: string; args: unknown[] };

export function fakeControl(overrides: Partial<DeviceControlService> = {}) {
  const calls: ControlCall[] = [];
  const results = new Map<string, RecordQueryResult>();
  const progress = (deviceId: string, state: CatalogProgress['state']): CatalogProgress => ({
    deviceId, state, total: null, received: 0, startedAt: state === 'idle' ? null : NOW, finishedAt: null, partial: false, error: null,
  });
  const control: DeviceControlService = {
    async queryDeviceInfo(deviceId) {
      calls.push({ op: 'info', args: [deviceId] });
      return { deviceId, deviceName: 'IPC', manufacturer: 'Hikvision', model: 'DS-2CD', firmware: 'V5.5', channelCount: 1 };
    },
    async queryDeviceStatus(deviceId) {
      calls.push({ op: 'status', args: [deviceId] });
      return { deviceId, online: true, status: 'OK', encoding: true, recording: false, deviceTime: '2025-06-01T08:00:00', alarms: [] };
    },
    async syncCatalog(deviceId) {
      calls.push({ op: 'syncCatalog', args: [deviceId] });
      return progress(deviceId, 'running');
    },
    async catalogProgress(deviceId) {
      calls.push({ op: 'catalogProgress', args: [deviceId] });
      return progress(deviceId, 'idle');
    },
    async ptz(target: ChannelRef, command: PtzCommand, speed: number) {
      calls.push({ op: 'ptz', args: [target, command, speed] });
    },
    async deviceControl(deviceId: string, action: DeviceAction) {
      calls.push({ op: 'deviceControl', args: [deviceId, action] });
    },
    async queryRecords(target: ChannelRef, range: TimeRange) {
      calls.push({ op: 'queryRecords', args: [target, range] });
      const sn = String(1000 + results.size);
      results.set(sn, { sn, deviceId: target.deviceId, channelId: target.channelId, total: 0, state: 'done', complete: true, items: [], error: null });
      return { sn };
    },
    async recordResult(sn: string) {
      calls.push({ op: 'recordResult', args: [sn] });
      const r = results.get(sn);
      if (r === undefined) throw new RecordQueryNotFoundError(sn);
      return r;
    },
    ...overrides,
  };
  return { control, calls, results };
}

const channel = (channelId: string): ChannelInput => ({
  channelId, name: 'Gate', manufacturer: null, model: null, owner: null, civilCode: null, address: null,
  parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: 1, extra: {},
});

export async function buildFixture(
  options: {
    control?: Partial<DeviceControlService>;
    ownerRouting?: OwnerRoutingHook;
    edgeRouting?: EdgeRouting;
    readiness?: HttpDeps['readiness'];
    limits?: HttpDeps['limits'];
    media?: HttpDeps['media'];
    metrics?: HttpDeps['metrics'];
  } = {},
) {
  const clock = new FakeClock(NOW);
  const devices = createMemoryDeviceRepository();
  const reg = { transport: 'UDP' as const, remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at: NOW };
  await devices.registerDevice({ deviceId: DEV, ...reg });
  await devices.registerDevice({ deviceId: DEV_OFFLINE, ...reg });
  await devices.markOffline([DEV_OFFLINE]);
  await devices.provisionDevice({ deviceId: DEV_OTHER_TENANT, tenantId: OTHER_TENANT, password: 'secret' }, NOW);
  await devices.registerDevice({ deviceId: DEV_OTHER_TENANT, ...reg });
  await devices.replaceChannels(DEV, [channel(CH)], NOW);
  await devices.replaceChannels(DEV_OTHER_TENANT, [channel(CH_OTHER_TENANT)], NOW);
  const fake = fakeControl(options.control);
  const deps: HttpDeps = {
    instanceId: NODE,
    signingKey: KEY,
    storage: 'memory',
    devices,
    control: fake.control,
    nodes: createStandaloneNodeDirectory({
      nodeCode: NODE, sipAddress: '10.0.0.5:5060', internalBaseUrl: () => 'http://10.0.0.5:18080', cascadeNode: true,
      version: '0.1.0', startedAt: NOW, clock, devices,
    }),
    owners: createSelfOwnerDirectory(NODE),
    clock,
    logger: pino({ level: 'silent' }),
    utcOffsetMinutes: 480,
    ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
    ...(options.ownerRouting === undefined ? {} : { ownerRouting: options.ownerRouting }),
    ...(options.edgeRouting === undefined ? {} : { edgeRouting: options.edgeRouting }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.media === undefined ? {} : { media: options.media }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  };
  const app = buildHttpApp(deps);
  const token = (tenantId = TENANT, ttlSec = 3600, role: 'tenant' | 'operator' = 'tenant') => signToken({ tenantId, userId: 'u1', ttlSec, role }, KEY, NOW);
  const auth = async (tenantId = TENANT) => ({ 'blade-auth': `bearer ${await token(tenantId)}` });
  /** A token with the all-tenant operator role (SPEC SEC-2). */
  const operatorAuth = async (tenantId = TENANT) => ({ 'blade-auth': `bearer ${await token(tenantId, 3600, 'operator')}` });
  return { app, devices, clock, ...fake, token, auth, operatorAuth };
}
