// GB/T 28181-2022 commands on the control API: snapshot (SnapShotConfig, pictures uploaded to
// `POST /vms/snapshot/upload/:token` and listed here), firmware upgrade, SD card status and format,
// precise PTZ and its position, target tracking, cruise tracks, home position query. A device that
// did not register as a 2022 one gets 4610 at once (commands/device-commands.port.ts).
import { TRACK_MODES, type DeviceCommandService } from '../../commands/device-commands.port.ts';
import { BadParameterError } from '../../errors/catalog.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HandlerContext, RouteHandlers } from '../handler.types.ts';
import { decimal, gbId, oneOf, optionalInt, optionalLabel, requiredInt, requiredText } from '../params.ts';

type Ids =
  | 'snapshot.take'
  | 'snapshot.list'
  | 'snapshot.picture'
  | 'device.upgrade'
  | 'device.upgrade.state'
  | 'device.sdcard'
  | 'device.sdcard.format'
  | 'ptz.precise'
  | 'ptz.position'
  | 'ptz.track'
  | 'ptz.cruise.tracks'
  | 'ptz.cruise.track'
  | 'ptz.home.query';

/** GB/T 28181-2022 §A.2.3.2 SnapShotConfig: 1-10 pictures. */
export const SNAPSHOT_COUNT_MAX = 10;
const SNAPSHOT_INTERVAL_MAX_S = 600;

function fileUrl(ctx: HandlerContext): string {
  const v = requiredText(ctx.query, 'fileUrl');
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new BadParameterError('fileUrl', 'must be an absolute http://, https:// or ftp:// URL');
  }
  if (!['http:', 'https:', 'ftp:'].includes(url.protocol) || v.length > 1024) throw new BadParameterError('fileUrl', 'must be an absolute http://, https:// or ftp:// URL');
  return v;
}

export function device2022Handlers(commands: DeviceCommandService, access: DeviceAccess): Pick<RouteHandlers, Ids> {
  const channel = async (ctx: HandlerContext) => access.onlineChannel(operator(ctx), gbId(ctx.query, 'channelId'));
  const online = async (ctx: HandlerContext) => (await access.onlineDevice(operator(ctx), gbId(ctx.query, 'deviceId'))).deviceId;
  // stored pictures stay readable while the device is offline
  const known = async (ctx: HandlerContext) => (await access.device(operator(ctx), gbId(ctx.query, 'deviceId'))).deviceId;
  return {
    'snapshot.take': async (ctx) => {
      const count = optionalInt(ctx.query, 'count', 1, SNAPSHOT_COUNT_MAX) ?? 1;
      const interval = optionalInt(ctx.query, 'interval', 1, SNAPSHOT_INTERVAL_MAX_S) ?? 1;
      const target = await channel(ctx);
      ctx.log.child({ deviceId: target.deviceId, channelId: target.channelId }).info({ count, interval }, 'snapshot requested');
      return commands.snapshot(target, count, interval);
    },
    'snapshot.list': async (ctx) => commands.snapshots(await known(ctx)),
    'snapshot.picture': async (ctx) => {
      const name = requiredText(ctx.query, 'name');
      return commands.snapshotPicture(await known(ctx), name);
    },

    'device.upgrade': async (ctx) => {
      const firmware = optionalLabel(ctx.query, 'firmware', 64);
      if (firmware === undefined) throw new BadParameterError('firmware', 'is required');
      const url = fileUrl(ctx);
      const manufacturer = optionalLabel(ctx.query, 'manufacturer', 64) ?? '';
      const deviceId = await online(ctx);
      ctx.log.child({ deviceId }).info({ firmware }, 'device upgrade requested');
      return commands.upgrade(deviceId, firmware, url, manufacturer);
    },
    'device.upgrade.state': async (ctx) => commands.upgradeState(await known(ctx)),

    'device.sdcard': async (ctx) => commands.sdCardStatus(await online(ctx)),
    'device.sdcard.format': async (ctx) => {
      const index = optionalInt(ctx.query, 'index', 1, 16) ?? 1;
      const deviceId = await online(ctx);
      ctx.log.child({ deviceId }).info({ index }, 'SD card format requested');
      await commands.formatSdCard(deviceId, index);
      return null;
    },

    'ptz.precise': async (ctx) => {
      const pan = decimal(ctx.query, 'pan', 0, 360);
      const tilt = decimal(ctx.query, 'tilt', -90, 90);
      const zoom = decimal(ctx.query, 'zoom', 1, 999);
      await commands.ptzPrecise(await channel(ctx), pan, tilt, zoom);
      return null;
    },
    'ptz.position': async (ctx) => commands.ptzPosition(await channel(ctx)),
    'ptz.track': async (ctx) => {
      const mode = oneOf(ctx.query, 'mode', TRACK_MODES);
      await commands.targetTrack(await channel(ctx), mode);
      return null;
    },
    'ptz.cruise.tracks': async (ctx) => commands.cruiseTracks(await channel(ctx)),
    'ptz.cruise.track': async (ctx) => {
      const number = requiredInt(ctx.query, 'number', 0, 255);
      return commands.cruiseTrack(await channel(ctx), number);
    },
    'ptz.home.query': async (ctx) => commands.homePositionQuery(await channel(ctx)),
  };
}
