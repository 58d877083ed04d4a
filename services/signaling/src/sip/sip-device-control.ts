// DeviceControlService over SIP (SPEC §8, §12) for the devices registered on this instance. Queries
// are MESSAGEs whose Response is matched by SN (pending-queries.ts); controls complete on the device's
// SIP 200 (GB/T 28181-2016 §9.3: PTZ has no application answer, TeleBoot reboots the device); record
// queries return their SN at once and assemble in the background.
import { randomBytes } from 'node:crypto';
import {
  buildDeviceControl,
  buildDeviceInfoQuery,
  buildDeviceStatusQuery,
  buildRecordInfoQuery,
  decodeManscdpCommand,
  deviceControlForAction,
  encodePtzCmd,
  parseManscdp,
  ptzForControl,
  RESULT_ERROR,
  type DeviceInfoResponse,
  type DeviceStatusResponse,
} from '@vms/gb28181';
import type { SipResponse } from '@vms/sip';
import type { DeviceControlService, DeviceInfo, DeviceStatus, RecordQueryResult } from '../control/device-control.port.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { DeviceOfflineError, DeviceRejectedError } from '../errors/catalog.ts';
import { createCatalogSyncs } from './catalog-sync.ts';
import type { DeviceSession } from './device-flows.ts';
import type { DeviceMessenger } from './device-messenger.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { ManscdpUplink } from './manscdp-uplink.ts';
import { singleAnswer, type PendingQueries, type PendingSpec } from './pending-queries.ts';
import { createQueryRelay, type QueryRelay } from './query-relay.ts';
import type { QueryTimeouts } from './query-timeouts.ts';
import { createRecordAssembly, type RecordAssembly } from './record-assembler.ts';
import { createRecordResults, RECORD_RESULT_TTL_MS } from './record-results.ts';
import { toCatalogError } from './sip-status.ts';

/** SPEC ROUTE-1: where the cluster records `record-query SN → device` (its SnDirectory), if any. */
export interface SnIndex {
  remember(key: string, deviceId: DeviceId, ttlMs: number): Promise<void>;
}

export interface SipDeviceControlOptions {
  readonly side: DeviceSideDeps;
  readonly pending: PendingQueries;
  readonly messenger: DeviceMessenger;
  readonly uplink: ManscdpUplink;
  readonly timeouts: QueryTimeouts;
  readonly snIndex?: SnIndex;
}

export interface SipDeviceControl extends DeviceControlService {
  /** An upstream's query about a device registered here, its Responses handed on (query-relay.ts). */
  relayQuery: QueryRelay['relay'];
  /** Rejects waiting queries, waits for background assembly to settle. Idempotent. */
  close(): Promise<void>;
}

/** GB/T 28181 Annex A.3 recommends a control priority; 5 is what platforms and sample 11 send. */
const PTZ_CONTROL_PRIORITY = '5';


const onOff = (v: string | undefined): boolean | null => {
  const t = v?.trim().toUpperCase();
  return t === 'ON' ? true : t === 'OFF' ? false : null;
};

function deviceInfoOf(deviceId: DeviceId, b: DeviceInfoResponse): DeviceInfo {
  const channels = b.channel === undefined ? NaN : Number(b.channel.trim());
  return {
    deviceId,
    deviceName: b.deviceName ?? null,
    manufacturer: b.manufacturer ?? null,
    model: b.model ?? null,
    firmware: b.firmware ?? null,
    channelCount: Number.isInteger(channels) && channels >= 0 ? channels : null,
  };
}

function deviceStatusOf(deviceId: DeviceId, b: DeviceStatusResponse): DeviceStatus {
  const status = b.status?.trim().toUpperCase();
  return {
    deviceId,
    online: b.online?.trim().toUpperCase() === 'ONLINE',
    status: status === 'OK' || status === 'ON' ? 'OK' : 'ERROR', // some devices send ON (sample 09)
    encoding: onOff(b.encode),
    recording: onOff(b.record),
    deviceTime: b.deviceTime?.trim() ?? null,
    alarms: (b.alarms ?? []).map((a) => ({ deviceId: a.deviceId, status: a.dutyStatus ?? '' })),
  };
}

export function createSipDeviceControl(o: SipDeviceControlOptions): SipDeviceControl {
  const { side, pending, messenger, timeouts } = o;
  const records = createRecordResults();
  const recordAssemblies = new Map<string, RecordAssembly>();
  const background = new Set<Promise<void>>();
  /** Makes record SNs unique across instances and restarts (cluster SN index keys, ROUTE-1). */
  const snTag = randomBytes(4).toString('hex');
  let closing: Promise<void> | null = null;

  const sessionOf = (deviceId: DeviceId): DeviceSession => {
    const s = side.flows.get(deviceId);
    if (s === undefined || s.expiresAt <= side.clock.now()) throw new DeviceOfflineError(deviceId);
    return s;
  };

  /** Sends and, for devices that put the Response into the 200 itself (sample 08), handles that body. */
  const send = async (session: DeviceSession, targetId: string, body: Buffer, operation: string): Promise<void> => {
    const res: SipResponse = await messenger.send(session, targetId, body, operation);
    if (res.body.length === 0) return;
    try {
      const cmd = decodeManscdpCommand(parseManscdp(res.body));
      await o.uplink.handle(session, cmd, side.log.child({ deviceId: session.deviceId }));
    } catch (err) {
      side.log.debug({ err, deviceId: session.deviceId }, 'body of a 200 to our MESSAGE ignored');
    }
  };

  const ask = async <B, R>(session: DeviceSession, targetId: string, spec: PendingSpec<B, R>, build: (sn: string) => Buffer): Promise<R> => {
    const handle = pending.open(spec);
    try {
      await send(session, targetId, build(String(handle.sn)), spec.operation);
    } catch (err) {
      pending.fail(handle.sn, toCatalogError(err));
      throw err;
    }
    return handle.result;
  };

  const track = (task: Promise<void>): void => {
    background.add(task);
    void task.finally(() => background.delete(task));
  };

  const syncs = createCatalogSyncs({ side, pending, send, timeouts });
  const relay = createQueryRelay({ pending, timeouts, sessionOf, send });

  return {
    async queryDeviceInfo(deviceId) {
      const session = sessionOf(deviceId);
      const spec = { deviceId, cmdType: 'DeviceInfo', operation: 'DeviceInfo query', firstTimeoutMs: timeouts.deviceInfoMs, assembly: singleAnswer<DeviceInfoResponse>() };
      const body = await ask(session, deviceId, spec, (sn) => buildDeviceInfoQuery({ sn, deviceId }, { charset: session.charset }));
      if (body.result?.trim().toUpperCase() === RESULT_ERROR) throw new DeviceRejectedError(deviceId, spec.operation, 'Result ERROR');
      const info = deviceInfoOf(deviceId, body);
      side.devices
        .updateDeviceInfo(deviceId, { name: info.deviceName, manufacturer: info.manufacturer, model: info.model, firmware: info.firmware }, side.clock.now())
        .catch((err: unknown) => side.log.warn({ err, deviceId }, 'storing device info failed'));
      return info;
    },

    async queryDeviceStatus(deviceId) {
      const session = sessionOf(deviceId);
      const spec = { deviceId, cmdType: 'DeviceStatus', operation: 'DeviceStatus query', firstTimeoutMs: timeouts.deviceStatusMs, assembly: singleAnswer<DeviceStatusResponse>() };
      const body = await ask(session, deviceId, spec, (sn) => buildDeviceStatusQuery({ sn, deviceId }, { charset: session.charset }));
      if (body.result?.trim().toUpperCase() === RESULT_ERROR) throw new DeviceRejectedError(deviceId, spec.operation, 'Result ERROR');
      return deviceStatusOf(deviceId, body);
    },

    syncCatalog: (deviceId) => syncs.start(deviceId),

    relayQuery: (deviceId, query, types, onResponse) => relay.relay(deviceId, query, types, onResponse),

    async catalogProgress(deviceId) {
      return syncs.progress(deviceId);
    },

    async ptz(target, command, speed) {
      const session = sessionOf(target.deviceId);
      const ptzCmd = encodePtzCmd(ptzForControl(command, speed));
      const body = buildDeviceControl(
        { sn: String(pending.nextSn()), deviceId: target.channelId, command: { type: 'PTZCmd', ptzCmd, controlPriority: PTZ_CONTROL_PRIORITY } },
        { charset: session.charset },
      );
      await send(session, target.channelId, body, 'PTZ control');
    },

    async deviceControl(deviceId, action) {
      const session = sessionOf(deviceId);
      const body = buildDeviceControl({ sn: String(pending.nextSn()), deviceId, command: deviceControlForAction(action) }, { charset: session.charset });
      await send(session, deviceId, body, `device control ${action}`);
    },

    async queryRecords(target, range) {
      const { deviceId, channelId } = target;
      const session = sessionOf(deviceId);
      const assembly = createRecordAssembly();
      const handle = pending.open({
        deviceId,
        cmdType: 'RecordInfo',
        operation: 'RecordInfo query',
        firstTimeoutMs: timeouts.recordFirstMs,
        nextTimeoutMs: timeouts.recordNextMs,
        maxTotalMs: timeouts.recordMaxMs,
        assembly,
      });
      const sn = `${snTag}-${handle.sn}`;
      const now = side.clock.now();
      records.put({ sn, deviceId, channelId, total: null, state: 'running', complete: false, items: [], error: null }, now);
      recordAssemblies.set(sn, assembly);
      const log = side.log.child({ deviceId, channelId, sn });
      const settled = handle.result.then(
        (answer) => {
          records.update(sn, { state: 'done', total: answer.total, complete: answer.complete, items: answer.items });
          log.info({ items: answer.items.length, total: answer.total, complete: answer.complete }, 'record query finished');
        },
        (err: unknown) => {
          records.update(sn, { state: 'failed', error: err instanceof Error ? err.message : String(err) });
          log.info({ reason: err instanceof Error ? err.message : String(err) }, 'record query failed');
        },
      );
      track(settled.finally(() => recordAssemblies.delete(sn)));
      const body = buildRecordInfoQuery(
        { sn: String(handle.sn), deviceId: channelId, startTime: range.start, endTime: range.end, secrecy: '0', type: 'all' },
        { charset: session.charset },
      );
      try {
        await send(session, channelId, body, 'RecordInfo query');
      } catch (err) {
        pending.fail(handle.sn, toCatalogError(err));
        throw err;
      }
      if (o.snIndex !== undefined) {
        await o.snIndex.remember(sn, deviceId, RECORD_RESULT_TTL_MS).catch((err: unknown) => log.warn({ err }, 'record query SN not indexed for routing'));
      }
      return { sn };
    },

    async recordResult(sn) {
      const kept: RecordQueryResult = records.get(sn, side.clock.now());
      const live = kept.state === 'running' ? recordAssemblies.get(sn) : undefined;
      if (live === undefined) return kept;
      const now = live.snapshot();
      return { ...kept, total: now.total, items: now.items };
    },

    close() {
      closing ??= (async () => {
        pending.close();
        await syncs.close();
        await Promise.all([...background]);
      })();
      return closing;
    },
  } satisfies SipDeviceControl;
}
