// The three ways the platform talks MANSCDP to a device it owns (GB/T 28181-2016 §9.3, §9.5), for the
// command services: a control completed by the device's SIP 200 (PTZ codes, presets: no application
// answer, §9.3.1), and a query or configuration whose one Response is matched by SN (STYLE 8). A
// Response carried in the 200 itself (sample 08) is handed to the uplink like a MESSAGE would be.
import { buildDeviceControl, decodeManscdpCommand, parseManscdp, type DeviceControlCommand } from '@vms/gb28181';
import type { DeviceId } from '../devices/device.types.ts';
import { DeviceOfflineError, GbVersionUnsupportedError } from '../errors/catalog.ts';
import type { DeviceSession } from './device-flows.ts';
import type { DeviceMessenger } from './device-messenger.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { ManscdpUplink } from './manscdp-uplink.ts';
import { singleAnswer, type PendingQueries } from './pending-queries.ts';
import { toCatalogError } from './sip-status.ts';

export interface DeviceExchangeOptions {
  readonly side: DeviceSideDeps;
  readonly pending: PendingQueries;
  readonly messenger: DeviceMessenger;
  readonly uplink: ManscdpUplink;
  /** Wait for a Response after the 200. */
  readonly responseMs: number;
}

export interface DeviceExchange {
  /** The device's live registration here (DeviceOfflineError otherwise). */
  sessionOf(deviceId: DeviceId): DeviceSession;
  /** As sessionOf, and the device must speak GB/T 28181-2022 (GbVersionUnsupportedError, 4610). */
  session2022(deviceId: DeviceId, operation: string): DeviceSession;
  control(session: DeviceSession, targetId: string, command: DeviceControlCommand, operation: string): Promise<void>;
  /** Sends `build(sn)` and resolves with the one Response of `cmdType` carrying that SN. */
  ask<B>(session: DeviceSession, cmdType: string, operation: string, build: (sn: string) => Buffer, targetId?: string): Promise<B>;
  nextSn(): string;
}


export function createDeviceExchange(o: DeviceExchangeOptions): DeviceExchange {
  const { side, pending, messenger } = o;

  const send = async (session: DeviceSession, targetId: string, body: Buffer, operation: string): Promise<void> => {
    const res = await messenger.send(session, targetId, body, operation);
    if (res.body.length === 0) return;
    try {
      await o.uplink.handle(session, decodeManscdpCommand(parseManscdp(res.body)), side.log.child({ deviceId: session.deviceId }));
    } catch (err) {
      side.log.debug({ err, deviceId: session.deviceId }, 'body of a 200 to our MESSAGE ignored');
    }
  };

  const sessionOf = (deviceId: DeviceId): DeviceSession => {
    const s = side.flows.get(deviceId);
    if (s === undefined || s.expiresAt <= side.clock.now()) throw new DeviceOfflineError(deviceId);
    return s;
  };

  return {
    sessionOf,
    session2022(deviceId, operation) {
      const s = sessionOf(deviceId);
      if (s.gbVersion !== '2022') throw new GbVersionUnsupportedError(deviceId, operation, s.gbVersion);
      return s;
    },
    async control(session, targetId, command, operation) {
      const body = buildDeviceControl({ sn: String(pending.nextSn()), deviceId: targetId, command }, { charset: session.charset });
      await send(session, targetId, body, operation);
    },
    async ask<B>(session: DeviceSession, cmdType: string, operation: string, build: (sn: string) => Buffer, targetId = session.deviceId): Promise<B> {
      const handle = pending.open({ deviceId: session.deviceId, cmdType, operation, firstTimeoutMs: o.responseMs, assembly: singleAnswer<B>() });
      try {
        await send(session, targetId, build(String(handle.sn)), operation);
      } catch (err) {
        pending.fail(handle.sn, toCatalogError(err));
        throw err;
      }
      return handle.result;
    },
    nextSn: () => String(pending.nextSn()),
  };
}
