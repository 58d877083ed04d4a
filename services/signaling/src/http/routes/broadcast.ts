// Voice broadcast on the control API (GB/T 28181-2016 §9.12, sip/sip-broadcast.ts): start and stop
// per channel (routedBy: channel), list per device. Absent service (no SIP side / media): 4608.
import { ControlUnavailableError } from '../../errors/catalog.ts';
import type { SipBroadcast } from '../../sip/sip-broadcast.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { RouteHandlers } from '../handler.types.ts';
import { BadParameterError } from '../../errors/catalog.ts';
import { gbId, requiredText } from '../params.ts';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function broadcastHandlers(broadcast: Pick<SipBroadcast, 'start' | 'stop' | 'list'> | undefined, access: DeviceAccess): Pick<RouteHandlers, 'broadcast.start' | 'broadcast.stop' | 'broadcast.list'> {
  const service = (): Pick<SipBroadcast, 'start' | 'stop' | 'list'> => {
    if (broadcast === undefined) throw new ControlUnavailableError('voice broadcast');
    return broadcast;
  };
  const name = (q: Readonly<Record<string, unknown>>, key: string): string => {
    const v = requiredText(q, key);
    if (!NAME.test(v)) throw new BadParameterError(key, 'must be 1-64 characters of A-Z a-z 0-9 _ . -');
    return v;
  };
  return {
    'broadcast.start': async (ctx) => {
      const source = { mediaNodeId: name(ctx.query, 'mediaNodeId'), app: name(ctx.query, 'app'), stream: name(ctx.query, 'stream') };
      const target = await access.onlineChannel(operator(ctx), gbId(ctx.query, 'channelId'));
      ctx.log.child({ deviceId: target.deviceId, channelId: target.channelId }).info(source, 'voice broadcast requested');
      return service().start(target, source);
    },
    'broadcast.stop': async (ctx) => {
      const target = await access.onlineChannel(operator(ctx), gbId(ctx.query, 'channelId'));
      await service().stop(target.channelId);
      return null;
    },
    'broadcast.list': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      return broadcast === undefined ? [] : broadcast.list(device.deviceId);
    },
  };
}
