import { PTZ_COMMANDS, PTZ_SPEED_DEFAULT, PTZ_SPEED_MAX, PTZ_SPEED_MIN } from '../../control/device-control.port.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, oneOf, optionalInt } from '../params.ts';

/** SPEC §12 `POST /vms/ptz/control?channelId=&command=&speed=` (routedBy: channel). */
export function ptzHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, 'ptz.control'> {
  return {
    'ptz.control': async (ctx) => {
      const principal = operator(ctx);
      const channelId = gbId(ctx.query, 'channelId');
      const command = oneOf(ctx.query, 'command', PTZ_COMMANDS);
      const speed = optionalInt(ctx.query, 'speed', PTZ_SPEED_MIN, PTZ_SPEED_MAX) ?? PTZ_SPEED_DEFAULT;
      const target = await access.onlineChannel(principal, channelId);
      ctx.log.child({ deviceId: target.deviceId, channelId }).debug({ command, speed }, 'ptz requested');
      await deps.control.ptz(target, command, speed);
      return null;
    },
  };
}
