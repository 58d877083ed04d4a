// PTZ beyond moves (routedBy: channel) and device configuration (routedBy: device): presets, cruise,
// scan, home position, drag-to-zoom (GB/T 28181-2016 Annex A.3.4-A.3.6, §A.2.3.1), DeviceConfig
// BasicParam and ConfigDownload (§A.2.3.2, §A.2.4.7). Tenant and online checks as for PTZ moves.
import {
  CRUISE_ACTIONS,
  PRESET_ACTIONS,
  PRESET_MAX,
  PRESET_MIN,
  PTZ_VALUE_MAX,
  SCAN_ACTIONS,
  type DeviceCommandService,
  type ZoomArea,
} from '../../commands/device-commands.port.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { RouteHandlers } from '../handler.types.ts';
import { gbId, oneOf, optionalBoolean, optionalInt, optionalLabel, optionalText, requiredInt } from '../params.ts';
import { BadParameterError } from '../../errors/catalog.ts';

type Ids = 'ptz.preset' | 'ptz.presets' | 'ptz.cruise' | 'ptz.scan' | 'ptz.home' | 'ptz.dragzoom' | 'device.config' | 'device.config.download';

/** §A.2.4.7 ConfigType values a 2016 device knows; several joined by '/'. */
const CONFIG_TYPES = ['BasicParam', 'VideoParamOpt', 'SVACEncodeConfig', 'SVACDecodeConfig', 'VideoParamAttribute', 'VideoRecordPlan', 'VideoAlarmRecord', 'PictureMask', 'FrameMirror', 'AlarmReport', 'OSDConfig', 'SnapShot'];
const PIXELS_MAX = 65_535;

export function ptzExtraHandlers(commands: DeviceCommandService, access: DeviceAccess): Pick<RouteHandlers, Ids> {
  const channel = async (ctx: Parameters<RouteHandlers['ptz.preset']>[0]) => access.onlineChannel(operator(ctx), gbId(ctx.query, 'channelId'));
  const group = (q: Parameters<RouteHandlers['ptz.preset']>[0]['query']): number => optionalInt(q, 'group', 0, 255) ?? 1;
  return {
    'ptz.preset': async (ctx) => {
      const action = oneOf(ctx.query, 'action', PRESET_ACTIONS);
      const presetId = requiredInt(ctx.query, 'presetId', PRESET_MIN, PRESET_MAX);
      const target = await channel(ctx);
      ctx.log.child({ deviceId: target.deviceId, channelId: target.channelId }).info({ action, presetId }, 'preset requested');
      await commands.preset(target, action, presetId);
      return null;
    },

    'ptz.presets': async (ctx) => commands.presets(await channel(ctx)),

    'ptz.cruise': async (ctx) => {
      const action = oneOf(ctx.query, 'action', CRUISE_ACTIONS);
      const g = group(ctx.query);
      let value = 0;
      if (action === 'add' || action === 'remove') value = requiredInt(ctx.query, 'presetId', PRESET_MIN, PRESET_MAX);
      if (action === 'speed' || action === 'dwell') value = requiredInt(ctx.query, 'value', 0, PTZ_VALUE_MAX);
      const target = await channel(ctx);
      ctx.log.child({ deviceId: target.deviceId, channelId: target.channelId }).info({ action, group: g, value }, 'cruise requested');
      await commands.cruise(target, action, g, value);
      return null;
    },

    'ptz.scan': async (ctx) => {
      const action = oneOf(ctx.query, 'action', SCAN_ACTIONS);
      const g = group(ctx.query);
      const speed = action === 'speed' ? requiredInt(ctx.query, 'speed', 0, PTZ_VALUE_MAX) : 0;
      const target = await channel(ctx);
      ctx.log.child({ deviceId: target.deviceId, channelId: target.channelId }).info({ action, group: g, speed }, 'scan requested');
      await commands.scan(target, action, g, speed);
      return null;
    },

    'ptz.home': async (ctx) => {
      const enabled = optionalBoolean(ctx.query, 'enabled');
      if (enabled === undefined) throw new BadParameterError('enabled', 'is required');
      const resetTimeSec = optionalInt(ctx.query, 'resetTime', 1, 86_400);
      const presetIndex = optionalInt(ctx.query, 'presetIndex', PRESET_MIN, PRESET_MAX);
      if (enabled && presetIndex === undefined) throw new BadParameterError('presetIndex', 'is required when enabled');
      const target = await channel(ctx);
      await commands.homePosition(target, { enabled, ...(resetTimeSec === undefined ? {} : { resetTimeSec }), ...(presetIndex === undefined ? {} : { presetIndex }) });
      return null;
    },

    'ptz.dragzoom': async (ctx) => {
      const direction = oneOf(ctx.query, 'direction', ['in', 'out'] as const);
      const px = (name: string): number => requiredInt(ctx.query, name, 0, PIXELS_MAX);
      const area: ZoomArea = { length: px('length'), width: px('width'), midPointX: px('midPointX'), midPointY: px('midPointY'), lengthX: px('lengthX'), lengthY: px('lengthY') };
      if (area.midPointX > area.length || area.midPointY > area.width) throw new BadParameterError('midPointX', 'the mid point must lie inside the length × width picture');
      const target = await channel(ctx);
      await commands.dragZoom(target, direction, area);
      return null;
    },

    'device.config': async (ctx) => {
      const name = optionalLabel(ctx.query, 'name', 64);
      const expirationSec = optionalInt(ctx.query, 'expiration', 60, 604_800);
      const heartBeatIntervalSec = optionalInt(ctx.query, 'heartBeatInterval', 5, 3600);
      const heartBeatCount = optionalInt(ctx.query, 'heartBeatCount', 1, 100);
      const device = await access.onlineDevice(operator(ctx), gbId(ctx.query, 'deviceId'));
      ctx.log.child({ deviceId: device.deviceId }).info({ expirationSec, heartBeatIntervalSec, heartBeatCount }, 'device config requested');
      await commands.configureBasic(device.deviceId, {
        ...(name === undefined ? {} : { name }),
        ...(expirationSec === undefined ? {} : { expirationSec }),
        ...(heartBeatIntervalSec === undefined ? {} : { heartBeatIntervalSec }),
        ...(heartBeatCount === undefined ? {} : { heartBeatCount }),
      });
      return null;
    },

    'device.config.download': async (ctx) => {
      const configType = optionalText(ctx.query, 'configType') ?? 'BasicParam';
      const parts = configType.split('/');
      if (parts.length > CONFIG_TYPES.length || !parts.every((p) => CONFIG_TYPES.includes(p))) {
        throw new BadParameterError('configType', `must be one or more of ${CONFIG_TYPES.join(', ')} joined by /`);
      }
      const device = await access.onlineDevice(operator(ctx), gbId(ctx.query, 'deviceId'));
      return commands.downloadConfig(device.deviceId, configType);
    },
  };
}
