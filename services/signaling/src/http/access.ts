// Device lookups every handler shares (SPEC SEC-2): 403 another tenant's, 4601 offline. For a tenant
// token an unknown device or channel answers exactly like another tenant's (403, same message), so a
// tenant cannot learn which ids exist elsewhere; the operator role sees every tenant and gets 404.
import { isOperator, mayAccessTenant, type Principal } from '../auth/principal.ts';
import { ChannelNotFoundError, DeviceNotFoundError, DeviceOfflineError, RoleForbiddenError, TenantForbiddenError, UnauthorizedError, type VmsError } from '../errors/catalog.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { Device, DeviceId } from '../devices/device.types.ts';
import type { ChannelRef } from '../control/device-control.port.ts';
import type { HandlerContext } from './handler.types.ts';

export function operator(ctx: HandlerContext): Principal {
  if (ctx.principal === null) throw new UnauthorizedError('missing');
  return ctx.principal;
}

/** The caller, who must hold the all-tenant operator role (SPEC SEC-2). */
export function operatorRole(ctx: HandlerContext, what: string): Principal {
  const principal = operator(ctx);
  if (!isOperator(principal)) throw new RoleForbiddenError(what);
  return principal;
}

/** What a missing resource answers: 404 for the operator role, the tenant refusal (403) for a tenant. */
export function missing(principal: Principal, id: string, notFound: VmsError): VmsError {
  return isOperator(principal) ? notFound : new TenantForbiddenError(id);
}

export interface DeviceAccess {
  /** The caller's device: TenantForbiddenError (another tenant's or, for a tenant, unknown) / DeviceNotFoundError (operator). */
  device(principal: Principal, deviceId: DeviceId): Promise<Device>;
  /** As `device`, and it must be online (DeviceOfflineError, SPEC 4601). */
  onlineDevice(principal: Principal, deviceId: DeviceId): Promise<Device>;
  /** Resolves a channel to its device, which must be the caller's and online. */
  onlineChannel(principal: Principal, channelId: string): Promise<ChannelRef>;
}

export function createDeviceAccess(devices: DeviceRepository): DeviceAccess {
  const device = async (principal: Principal, deviceId: DeviceId): Promise<Device> => {
    const d = await devices.getDevice(deviceId);
    if (d === null) throw missing(principal, deviceId, new DeviceNotFoundError(deviceId));
    if (!mayAccessTenant(principal, d.tenantId)) throw new TenantForbiddenError(deviceId);
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
      if (deviceId === null) throw missing(principal, channelId, new ChannelNotFoundError(channelId));
      await onlineDevice(principal, deviceId);
      return { deviceId, channelId };
    },
  };
}
