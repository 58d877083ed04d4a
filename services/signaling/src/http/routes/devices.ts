// Database-backed listings (routedBy: null): devices with owner node and online flag, channels.
// SPEC SEC-2: a tenant token lists its own tenant's devices; the operator role lists every tenant's, or
// one tenant's with `?tenantId=`.
import { isOperator, TENANT_ID } from '../../auth/principal.ts';
import { BadParameterError, TenantForbiddenError } from '../../errors/catalog.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, optionalBoolean, optionalText, paging } from '../params.ts';
import { channelView, deviceView, pageView } from '../views.ts';

/** A device id prefix (search): digits only, so it cannot carry a LIKE wildcard. */
const ID_PREFIX = /^[0-9]{1,20}$/;

export function deviceHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, 'devices.list' | 'devices.get' | 'channels.list'> {
  return {
    'devices.list': async (ctx) => {
      const principal = operator(ctx);
      const online = optionalBoolean(ctx.query, 'online');
      const asked = optionalText(ctx.query, 'tenantId');
      if (asked !== undefined && !TENANT_ID.test(asked)) throw new BadParameterError('tenantId', 'must be 1-12 characters of A-Z a-z 0-9 _ -');
      if (asked !== undefined && !isOperator(principal) && asked !== principal.tenantId) throw new TenantForbiddenError(asked);
      const tenantId = isOperator(principal) ? asked : principal.tenantId;
      const idPrefix = optionalText(ctx.query, 'idPrefix');
      if (idPrefix !== undefined && !ID_PREFIX.test(idPrefix)) throw new BadParameterError('idPrefix', 'must be 1-20 digits');
      const page = await deps.devices.listDevices({
        ...(tenantId === undefined ? {} : { tenantId }),
        ...(online === undefined ? {} : { online }),
        ...(idPrefix === undefined ? {} : { idPrefix }),
        ...paging(ctx.query),
      });
      const owners = await deps.owners.ownersOf(page.items.map((d) => d.deviceId));
      return pageView(page, (d) => deviceView(d, owners.get(d.deviceId) ?? null));
    },

    'devices.get': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.params, 'deviceId'));
      const owners = await deps.owners.ownersOf([device.deviceId]);
      return deviceView(device, owners.get(device.deviceId) ?? null);
    },

    'channels.list': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      return pageView(await deps.devices.listChannels(device.deviceId, paging(ctx.query)), channelView);
    },
  };
}
