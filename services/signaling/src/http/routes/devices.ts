// Database-backed listings (routedBy: null): devices with owner node and online flag, channels.
import { operator, type DeviceAccess } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, optionalBoolean, paging } from '../params.ts';
import { channelView, deviceView, pageView } from '../views.ts';

export function deviceHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, 'devices.list' | 'devices.get' | 'channels.list'> {
  return {
    'devices.list': async (ctx) => {
      const principal = operator(ctx);
      const online = optionalBoolean(ctx.query, 'online');
      const page = await deps.devices.listDevices({ tenantId: principal.tenantId, ...(online === undefined ? {} : { online }), ...paging(ctx.query) });
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
