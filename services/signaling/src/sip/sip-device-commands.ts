// DeviceCommandService over SIP (SPEC §8 "Also"): presets, cruise, scan, home position, drag-to-zoom,
// DeviceConfig / ConfigDownload, and the GB/T 28181-2022 commands, for devices registered here.
// PTZ codes complete on the device's SIP 200 like moves (§9.3.1); configuration and queries wait for
// the one Response matched by SN; 2022 commands are refused up front (4610) for devices that did not
// register as 2022 ones (gb-version.ts). Snapshot pictures arrive by HTTP (receiveSnapshot) under a
// random token and are kept on disk (commands/snapshot-files.fs.ts).
import { randomBytes } from 'node:crypto';
import {
  buildConfigDownloadQuery,
  buildDeviceConfig,
  buildPresetQuery,
  buildQuery2022,
  encodePtzCmd,
  RESULT_ERROR,
  type ConfigDownloadResponse,
  type ManscdpMessage,
  type PresetQueryResponse,
  type PtzCommand,
  type Query2022,
  type ResultResponse,
} from '@vms/gb28181';
import type { ChannelRef } from '../control/device-control.port.ts';
import type { DeviceAnswer, DeviceCommandService, StoredSnapshot, UpgradeState } from '../commands/device-commands.port.ts';
import type { SnapshotFiles } from '../commands/snapshot-files.fs.ts';
import { createSnapshotUploads, SNAPSHOT_UPLOAD_PATH } from '../commands/snapshot-uploads.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { BadParameterError, DeviceRejectedError, UploadNotFoundError } from '../errors/catalog.ts';
import type { DeviceExchange } from './device-exchange.ts';
import type { DeviceSession } from './device-flows.ts';
import type { DeviceSideDeps } from './device-side.types.ts';

export interface SipDeviceCommandsOptions {
  readonly side: DeviceSideDeps;
  readonly exchange: DeviceExchange;
  readonly files: SnapshotFiles;
  /** HTTP base devices reach this instance at (config `upload-base-url`). */
  readonly uploadBaseUrl: string;
}

export interface SipDeviceCommands extends DeviceCommandService {
  /** Unsubscribes from device events. Idempotent. */
  close(): void;
}

/** Annex A.3: the control priority platforms send (sip-device-control.ts). */
const PTZ_CONTROL_PRIORITY = '5';
/** Upgrade states kept (one per device, the latest). */
const MAX_UPGRADE_STATES = 10_000;
/** How long a snapshot request accepts uploads beyond count × interval. */
const UPLOAD_GRACE_MS = 60_000;
/** JPEG starts with SOI + a marker (ISO/IEC 10918-1 B.1.1.2); anything else is refused. */
const isJpeg = (b: Buffer): boolean => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;

const rejectOnError = (deviceId: string, operation: string, result: string | undefined): void => {
  if (result?.trim().toUpperCase() === RESULT_ERROR) throw new DeviceRejectedError(deviceId, operation, 'Result ERROR');
};

const answerOf = (msg: ManscdpMessage, operation: string): DeviceAnswer => {
  const result = msg.fields['Result'];
  rejectOnError(msg.deviceId, operation, typeof result === 'string' ? result : undefined);
  return { deviceId: msg.deviceId, fields: msg.fields };
};

export function createSipDeviceCommands(o: SipDeviceCommandsOptions): SipDeviceCommands {
  const { side, exchange, files } = o;
  const uploads = createSnapshotUploads();
  const upgrades = new Map<DeviceId, UpgradeState>();
  const log = side.log.child({ component: 'device-commands' });

  const ptzCode = async (target: ChannelRef, command: PtzCommand, operation: string): Promise<void> => {
    const session = exchange.sessionOf(target.deviceId);
    let ptzCmd: string;
    try {
      ptzCmd = encodePtzCmd(command);
    } catch (err) {
      throw new BadParameterError('value', err instanceof Error ? err.message : 'out of range');
    }
    await exchange.control(session, target.channelId, { type: 'PTZCmd', ptzCmd, controlPriority: PTZ_CONTROL_PRIORITY }, operation);
  };

  const query2022 = async (target: { deviceId: DeviceId; channelId?: string }, cmdType: Query2022, extra: { number?: string } = {}): Promise<DeviceAnswer> => {
    const session = exchange.session2022(target.deviceId, cmdType);
    const targetId = target.channelId ?? target.deviceId;
    const msg = await exchange.ask<ManscdpMessage>(session, cmdType, `${cmdType} query`, (sn) => buildQuery2022(cmdType, { sn, deviceId: targetId }, extra, { charset: session.charset }), targetId);
    return answerOf(msg, `${cmdType} query`);
  };

  const configure = async (session: DeviceSession, targetId: string, build: (sn: string) => Buffer, operation: string): Promise<void> => {
    const answer = await exchange.ask<ResultResponse>(session, 'DeviceConfig', operation, build, targetId);
    rejectOnError(session.deviceId, operation, answer.result);
  };

  const offSnapshot = side.events.on('snapshotFinished', (e) => {
    const slot = uploads.finish(e.sessionId);
    log.info({ deviceId: e.deviceId, sessionId: e.sessionId, files: e.fileIds.length, received: slot?.received ?? null }, 'snapshot upload finished');
  });
  const offUpgrade = side.events.on('upgradeResult', (e) => {
    const state = upgrades.get(e.deviceId);
    if (state === undefined || state.sessionId !== e.result.sessionId) {
      log.info({ deviceId: e.deviceId, sessionId: e.result.sessionId }, 'upgrade result for no upgrade of ours dropped');
      return;
    }
    const ok = e.result.result.trim().toUpperCase() !== RESULT_ERROR;
    upgrades.set(e.deviceId, {
      ...state,
      state: ok ? 'done' : 'failed',
      finishedAt: e.at,
      runningFirmware: e.result.firmware ?? null,
      reason: e.result.upgradeFailedReason ?? null,
    });
    log.info({ deviceId: e.deviceId, sessionId: state.sessionId, ok }, 'device upgrade finished');
  });

  return {
    async preset(target, action, presetId) {
      await ptzCode(target, { kind: 'preset', action: action === 'goto' ? 'call' : action, preset: presetId }, `preset ${action}`);
    },

    async presets(target) {
      const session = exchange.sessionOf(target.deviceId);
      const answer = await exchange.ask<PresetQueryResponse>(
        session,
        'PresetQuery',
        'PresetQuery',
        (sn) => buildPresetQuery({ sn, deviceId: target.channelId }, { charset: session.charset }),
        target.channelId,
      );
      return answer.presets.map((p) => ({ presetId: p.presetId, presetName: p.presetName ?? null }));
    },

    async cruise(target, action, group, value) {
      const command: PtzCommand = action === 'stop' ? { kind: 'stop' } : { kind: 'cruise', action, group, value: action === 'start' ? 0 : value };
      await ptzCode(target, command, `cruise ${action}`);
    },

    async scan(target, action, group, speed) {
      const command: PtzCommand = action === 'stop' ? { kind: 'stop' } : action === 'speed' ? { kind: 'scan', action, group, speed } : { kind: 'scan', action, group };
      await ptzCode(target, command, `scan ${action}`);
    },

    async homePosition(target, setting) {
      const session = exchange.sessionOf(target.deviceId);
      await exchange.control(
        session,
        target.channelId,
        {
          type: 'HomePosition',
          enabled: setting.enabled ? '1' : '0',
          ...(setting.resetTimeSec === undefined ? {} : { resetTime: String(setting.resetTimeSec) }),
          ...(setting.presetIndex === undefined ? {} : { presetIndex: String(setting.presetIndex) }),
        },
        'home position',
      );
    },

    async dragZoom(target, direction, a) {
      const session = exchange.sessionOf(target.deviceId);
      const zoom = { length: String(a.length), width: String(a.width), midPointX: String(a.midPointX), midPointY: String(a.midPointY), lengthX: String(a.lengthX), lengthY: String(a.lengthY) };
      await exchange.control(session, target.channelId, { type: 'DragZoom', direction, zoom }, `drag zoom ${direction}`);
    },

    async configureBasic(deviceId, s) {
      const session = exchange.sessionOf(deviceId);
      const basicParam = {
        ...(s.name === undefined ? {} : { name: s.name }),
        ...(s.expirationSec === undefined ? {} : { expiration: String(s.expirationSec) }),
        ...(s.heartBeatIntervalSec === undefined ? {} : { heartBeatInterval: String(s.heartBeatIntervalSec) }),
        ...(s.heartBeatCount === undefined ? {} : { heartBeatCount: String(s.heartBeatCount) }),
      };
      if (Object.keys(basicParam).length === 0) throw new BadParameterError('name', 'or expiration, heartBeatInterval, heartBeatCount is required');
      await configure(session, deviceId, (sn) => buildDeviceConfig({ sn, deviceId, basicParam }, { charset: session.charset }), 'DeviceConfig BasicParam');
    },

    async downloadConfig(deviceId, configType) {
      const session = exchange.sessionOf(deviceId);
      const answer = await exchange.ask<ConfigDownloadResponse>(session, 'ConfigDownload', 'ConfigDownload', (sn) =>
        buildConfigDownloadQuery({ sn, deviceId, configType }, { charset: session.charset }),
      );
      rejectOnError(deviceId, 'ConfigDownload', answer.result);
      const fields: DeviceAnswer['fields'] = { ...(answer.extra ?? {}) };
      if (answer.basicParam !== undefined) fields['BasicParam'] = { ...answer.basicParam };
      return { deviceId, fields };
    },

    async snapshot(target, count, intervalSec) {
      const session = exchange.session2022(target.deviceId, 'SnapShotConfig');
      const token = randomBytes(16).toString('hex');
      const uploadUrl = `${o.uploadBaseUrl}${SNAPSHOT_UPLOAD_PATH}${token}`;
      uploads.open({ token, deviceId: target.deviceId, channelId: target.channelId, expected: count, expiresAt: side.clock.now() + count * intervalSec * 1000 + UPLOAD_GRACE_MS });
      await configure(
        session,
        target.channelId,
        (sn) =>
          buildDeviceConfig(
            { sn, deviceId: target.channelId, snapShotConfig: { snapNum: String(count), interval: String(intervalSec), uploadUrl, sessionId: token } },
            { charset: session.charset },
          ),
        'DeviceConfig SnapShotConfig',
      ).catch((err: unknown) => {
        uploads.finish(token);
        throw err;
      });
      return { sessionId: token, uploadUrl, count };
    },

    async snapshots(deviceId) {
      return files.list(deviceId);
    },

    async snapshotPicture(deviceId, name) {
      const picture = await files.read(deviceId, name);
      if (picture === null) throw new UploadNotFoundError();
      return { contentType: 'image/jpeg', size: picture.length, base64: picture.toString('base64') };
    },

    async receiveSnapshot(token, picture): Promise<StoredSnapshot> {
      if (!isJpeg(picture)) throw new BadParameterError('body', 'must be a JPEG picture');
      const slot = uploads.claim(token, side.clock.now());
      if (slot === null) throw new UploadNotFoundError();
      const stored = await files.store({ deviceId: slot.deviceId, channelId: slot.channelId, sessionId: token, index: slot.received, at: side.clock.now() }, picture);
      log.info({ deviceId: slot.deviceId, channelId: slot.channelId, sessionId: token, size: picture.length }, 'snapshot stored');
      return stored;
    },

    async upgrade(deviceId, firmware, fileUrl, manufacturer) {
      const session = exchange.session2022(deviceId, 'DeviceUpgrade');
      const sessionId = randomBytes(16).toString('hex');
      await exchange.control(session, deviceId, { type: 'DeviceUpgrade', firmware, fileUrl, manufacturer, sessionId }, 'DeviceUpgrade');
      const state: UpgradeState = { deviceId, sessionId, firmware, state: 'running', startedAt: side.clock.now(), finishedAt: null, runningFirmware: null, reason: null };
      upgrades.delete(deviceId); // re-inserted last: insertion order = age for the bound below
      upgrades.set(deviceId, state);
      while (upgrades.size > MAX_UPGRADE_STATES) {
        const oldest = upgrades.keys().next().value;
        if (oldest === undefined) break;
        upgrades.delete(oldest);
      }
      return state;
    },

    async upgradeState(deviceId) {
      return upgrades.get(deviceId) ?? null;
    },

    sdCardStatus: (deviceId) => query2022({ deviceId }, 'SDCardStatus'),

    async formatSdCard(deviceId, index) {
      const session = exchange.session2022(deviceId, 'FormatSDCard');
      await exchange.control(session, deviceId, { type: 'FormatSDCard', index: String(index) }, 'FormatSDCard');
    },

    async ptzPrecise(target, pan, tilt, zoom) {
      const session = exchange.session2022(target.deviceId, 'PTZPreciseCtrl');
      await exchange.control(session, target.channelId, { type: 'PTZPreciseCtrl', pan, tilt, zoom }, 'PTZPreciseCtrl');
    },

    ptzPosition: (target) => query2022(target, 'PTZPosition'),

    async targetTrack(target, mode) {
      const session = exchange.session2022(target.deviceId, 'TargetTrack');
      const value = mode === 'auto' ? 'Auto' : mode === 'manual' ? 'Manual' : 'Stop';
      await exchange.control(session, target.channelId, { type: 'TargetTrack', value }, 'TargetTrack');
    },

    cruiseTracks: (target) => query2022(target, 'CruiseTrackListQuery'),
    cruiseTrack: (target, number) => query2022(target, 'CruiseTrackQuery', { number: String(number) }),
    homePositionQuery: (target) => query2022(target, 'HomePositionQuery'),

    close() {
      offSnapshot();
      offUpgrade();
    },
  } satisfies SipDeviceCommands;
}
