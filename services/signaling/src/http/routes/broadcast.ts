// Voice broadcast and talk on the control API (GB/T 28181-2016 §9.12, sip/sip-broadcast.ts): start and
// stop per channel (routedBy: channel), list per device. Absent service (no SIP side / media): 4608.
import { ControlUnavailableError } from '../../errors/catalog.ts';
import type { SipBroadcast } from '../../sip/sip-broadcast.ts';
import type { AudioMode } from '../../sip/sip-broadcast.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { RouteHandlers } from '../handler.types.ts';
import { BadParameterError } from '../../errors/catalog.ts';
import { gbId, requiredText } from '../params.ts';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

type AudioRoutes = 'broadcast.start' | 'broadcast.stop' | 'broadcast.list' | 'talk.start' | 'talk.stop' | 'talk.list';

export function broadcastHandlers(broadcast: Pick<SipBroadcast, 'start' | 'stop' | 'list'> | undefined, access: DeviceAccess): Pick<RouteHandlers, AudioRoutes> {
  const service = (what: string): Pick<SipBroadcast, 'start' | 'stop' | 'list'> => {
    if (broadcast === undefined) throw new ControlUnavailableError(what);
    return broadcast;
  };
  const name = (q: Readonly<Record<string, unknown>>, key: string): string => {
    const v = requiredText(q, key);
    if (!NAME.test(v)) throw new BadParameterError(key, 'must be 1-64 characters of A-Z a-z 0-9 _ . -');
    return v;
  };
  const handlers = (mode: AudioMode, what: string) => ({
    start: async (ctx: Parameters<RouteHandlers['broadcast.start']>[0]) => {
      const source = { mediaNodeId: name(ctx.query, 'mediaNodeId'), app: name(ctx.query, 'app'), stream: name(ctx.query, 'stream') };
      const target = await access.onlineChannel(operator(ctx), gbId(ctx.query, 'channelId'));
      ctx.log.child({ deviceId: target.deviceId, channelId: target.channelId }).info({ ...source, mode }, 'audio session requested');
      return service(what).start(target, source, mode);
    },
    stop: async (ctx: Parameters<RouteHandlers['broadcast.stop']>[0]) => {
      const target = await access.onlineChannel(operator(ctx), gbId(ctx.query, 'channelId'));
      await service(what).stop(target.channelId, mode);
      return null;
    },
    list: async (ctx: Parameters<RouteHandlers['broadcast.list']>[0]) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      return broadcast === undefined ? [] : broadcast.list(device.deviceId, mode);
    },
  });
  const b = handlers('broadcast', 'voice broadcast');
  const t = handlers('talk', 'voice talk');
  return {
    'broadcast.start': b.start,
    'broadcast.stop': b.stop,
    'broadcast.list': b.list,
    'talk.start': t.start,
    'talk.stop': t.stop,
    'talk.list': t.list,
  };
}
