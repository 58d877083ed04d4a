// Device lookups every handler shares: 404 unknown, 403 other tenant, 4601 offline.
import { assertSameTenant, type Principal } from '../auth/principal.ts';
import { ChannelNotFoundError, DeviceNotFoundError, DeviceOfflineError, UnauthorizedError } from '../errors/catalog.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { Device, DeviceId } from '../devices/device.types.ts';
import type { ChannelRef } from '../control/device-control.port.ts';
import type { HandlerContext } from './handler.types.ts';

export function operator(ctx: HandlerContext): Principal {
  if (ctx.principal === null) throw new UnauthorizedError('missing');
  return ctx.principal;
}

export interface DeviceAccess {
  /** The caller's device: DeviceNotFoundError / TenantForbiddenError. */
  device(principal: Principal, deviceId: DeviceId): Promise<Device>;
  /** As `device`, and it must be online (DeviceOfflineError, SPEC 4601). */
  onlineDevice(principal: Principal, deviceId: DeviceId): Promise<Device>;
  /** Resolves a channel to its device, which must be the caller's and online. */
  onlineChannel(principal: Principal, channelId: string): Promise<ChannelRef>;
}

export function createDeviceAccess(devices: DeviceRepository): DeviceAccess {
  const device = async (principal: Principal, deviceId: DeviceId): Promise<Device> => {
    const d = await devices.getDevice(deviceId);
    if (d === null) throw new DeviceNotFoundError(deviceId);
    assertSameTenant(principal, d);
    return d;
  };
  const onlineDevice = async (principal: Principal, deviceId: DeviceId): Promise<Device> => {
    const d = await device(principal, deviceId);
    if (!d.online) throw new DeviceOfflineError(deviceId);
    return d;
  };
  return {
    device,
    onlineDevice,
    async onlineChannel(principal, channelId) {
      const deviceId = await devices.findChannelDevice(channelId);
      if (deviceId === null) throw new ChannelNotFoundError(channelId);
      await onlineDevice(principal, deviceId);
      return { deviceId, channelId };
    },
  };
}
