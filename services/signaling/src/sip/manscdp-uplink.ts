// What a MANSCDP body from a registered device does, once its MESSAGE has been answered 200:
// Responses first go to the query waiting for their SN; unmatched ones are unsolicited reports
// (sample 07: Catalog and DeviceInfo pushed right after REGISTER) and are stored as such. Notifies
// update channels (Catalog) or become events (Alarm, MobilePosition) for the cascade to pick up.
import { buildResultResponse, RESULT_OK, type ManscdpCommand } from '@vms/gb28181';
import type { Logger } from 'pino';
import type { ChannelInput } from '../devices/device.types.ts';
import { changesOfNotify, diffChannels, readReportedChannels } from './catalog-changes.ts';
import { channelFromItem, changesFromNotify } from './catalog-channels.ts';
import type { DeviceSession } from './device-flows.ts';
import type { DeviceMessenger } from './device-messenger.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { Delivery } from './pending-queries.ts';

/** Where query answers go (PendingQueries). */
export interface AnswerSink {
  deliver(deviceId: string, cmdType: string, sn: string, body: unknown): Delivery;
}

export interface ManscdpUplink {
  /** Handles one decoded body from `session`'s device. Never rejects: failures are logged here. */
  handle(session: DeviceSession, cmd: ManscdpCommand, log: Logger): Promise<void>;
}

export function createManscdpUplink(deps: DeviceSideDeps, answers: AnswerSink, messenger: DeviceMessenger): ManscdpUplink {
  const { devices, events, clock } = deps;

  const storeChannels = async (deviceId: string, channels: ChannelInput[], log: Logger): Promise<void> => {
    if (channels.length === 0) return;
    // only the channels this message names (SPEC SEC-3: a message costs its size, not the catalog's)
    const stored = events.hasListeners('catalogChanged') ? await readReportedChannels(devices, deviceId, channels) : [];
    await devices.upsertChannels(deviceId, channels, clock.now());
    const changes = diffChannels(stored, channels, false);
    events.emit('catalogChanged', { deviceId, at: clock.now(), source: 'report', complete: false, channels, removed: [], changes });
    log.info({ channels: channels.length }, 'unsolicited catalog stored');
  };

  const handleOnce = async (session: DeviceSession, cmd: ManscdpCommand, log: Logger): Promise<void> => {
    const deviceId = session.deviceId;
    switch (cmd.kind) {
      case 'Notify/Keepalive':
        return; // liveness was recorded by the message handler
      case 'Response/Catalog':
        if (answers.deliver(deviceId, 'Catalog', cmd.body.sn, cmd.body) === 'unmatched') {
          await storeChannels(deviceId, cmd.body.items.map((i) => channelFromItem(i)), log);
        }
        return;
      case 'Response/DeviceInfo':
        if (answers.deliver(deviceId, 'DeviceInfo', cmd.body.sn, cmd.body) === 'unmatched') {
          const b = cmd.body;
          await devices.updateDeviceInfo(deviceId, { name: b.deviceName ?? null, manufacturer: b.manufacturer ?? null, model: b.model ?? null, firmware: b.firmware ?? null }, clock.now());
          log.info('unsolicited device info stored');
        }
        return;
      case 'Response/DeviceStatus':
      case 'Response/RecordInfo':
      case 'Response/PresetQuery':
      case 'Response/ConfigDownload':
      case 'Response/DeviceConfig':
      case 'Response/Broadcast': {
        const cmdType = cmd.kind.slice('Response/'.length);
        if (answers.deliver(deviceId, cmdType, cmd.body.sn, cmd.body) === 'unmatched') log.info({ cmdType, sn: cmd.body.sn }, 'unmatched response dropped');
        return;
      }
      case 'Response/DeviceControl': {
        // Control commands complete on the SIP 200 (sip-device-control.ts); the Result is only logged.
        const { result, sn } = cmd.body;
        if (result !== undefined && result.toUpperCase() !== RESULT_OK) log.warn({ sn, result }, 'device reported a failed control command');
        else log.debug({ sn, result }, 'device control acknowledged');
        return;
      }
      case 'Notify/Catalog': {
        const changes = changesFromNotify(cmd.body.items);
        const upserts = [...changes.upserts];
        const known = changes.statusChanges.length === 0 ? [] : await devices.getChannels(deviceId, changes.statusChanges.map((s) => s.item.deviceId));
        const storedById = new Map(known.map((c) => [c.channelId, c]));
        for (const { item, status } of changes.statusChanges) {
          const stored = storedById.get(item.deviceId);
          if (stored === undefined) upserts.push(channelFromItem(item, status));
          else {
            const { deviceId: _d, updatedAt: _u, ...kept } = stored;
            upserts.push({ ...kept, status });
          }
        }
        const now = clock.now();
        if (upserts.length > 0) await devices.upsertChannels(deviceId, upserts, now);
        if (changes.removed.length > 0) await devices.removeChannels(deviceId, changes.removed, now);
        events.emit('catalogChanged', {
          deviceId,
          at: now,
          source: 'notify',
          complete: false,
          channels: upserts,
          removed: changes.removed,
          changes: changesOfNotify(cmd.body.items),
        });
        log.info({ upserted: upserts.length, removed: changes.removed.length }, 'catalog notification applied');
        return;
      }
      case 'Notify/Alarm': {
        const alarm = cmd.body;
        events.emit('alarm', { deviceId, at: clock.now(), alarm });
        log.info({ sn: alarm.sn, alarmMethod: alarm.alarmMethod, alarmPriority: alarm.alarmPriority }, 'alarm received');
        // §9.4.2: the platform acknowledges the alarm with Response/Alarm carrying the same SN.
        const ack = buildResultResponse('Alarm', { sn: alarm.sn, deviceId: alarm.deviceId, result: RESULT_OK }, { charset: session.charset });
        await messenger.send(session, deviceId, ack, 'alarm acknowledgement');
        return;
      }
      case 'Notify/MobilePosition':
        events.emit('mobilePosition', { deviceId, at: clock.now(), position: cmd.body });
        return;
      case 'Notify/UploadSnapShotFinished':
        events.emit('snapshotFinished', { deviceId, at: clock.now(), sessionId: cmd.body.sessionId, fileIds: cmd.body.fileIds });
        return;
      case 'Notify/DeviceUpgradeResult':
        events.emit('upgradeResult', { deviceId, at: clock.now(), result: cmd.body });
        return;
      case 'generic':
        // Responses this package has no typed decoder for (the 2022 queries): matched by SN like the rest.
        if (cmd.body.root === 'Response' && answers.deliver(deviceId, cmd.body.cmdType, cmd.body.sn, cmd.body) === 'unmatched') {
          log.info({ cmdType: cmd.body.cmdType, sn: cmd.body.sn }, 'unmatched response dropped');
        } else if (cmd.body.root !== 'Response') log.debug({ cmdType: cmd.body.cmdType }, 'MANSCDP message not handled');
        return;
      default:
        log.debug({ kind: cmd.kind }, 'MANSCDP message not handled');
    }
  };

  return {
    async handle(session, cmd, log) {
      try {
        await handleOnce(session, cmd, log);
      } catch (err) {
        log.warn({ err, kind: cmd.kind }, 'device message handling failed');
      }
    },
  };
}
