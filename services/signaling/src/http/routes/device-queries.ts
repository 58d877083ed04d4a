// Live device-level operations (routedBy: device): DeviceInfo, DeviceStatus, catalog, DeviceControl.
import { DEVICE_ACTIONS } from '../../control/device-control.port.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, oneOf } from '../params.ts';

type Ids = 'device.info' | 'device.status' | 'catalog.sync' | 'catalog.progress' | 'device.control';

export function deviceQueryHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, Ids> {
  const { control } = deps;
  return {
    'device.info': async (ctx) => {
      const device = await access.onlineDevice(operator(ctx), gbId(ctx.query, 'deviceId'));
      return control.queryDeviceInfo(device.deviceId);
    },

    'device.status': async (ctx) => {
      const device = await access.onlineDevice(operator(ctx), gbId(ctx.query, 'deviceId'));
      return control.queryDeviceStatus(device.deviceId);
    },

    'catalog.sync': async (ctx) => {
      const device = await access.onlineDevice(operator(ctx), gbId(ctx.query, 'deviceId'));
      ctx.log.child({ deviceId: device.deviceId }).info('catalog sync requested');
      return control.syncCatalog(device.deviceId);
    },

    'catalog.progress': async (ctx) => {
      // Progress is readable while the device is offline (a sync may have just failed).
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      return control.catalogProgress(device.deviceId);
    },

    'device.control': async (ctx) => {
      const principal = operator(ctx);
      const deviceId = gbId(ctx.query, 'deviceId');
      const action = oneOf(ctx.query, 'action', DEVICE_ACTIONS);
      const device = await access.onlineDevice(principal, deviceId);
      ctx.log.child({ deviceId }).info({ action }, 'device control requested');
      await control.deviceControl(device.deviceId, action);
      return null;
    },
  };
}
