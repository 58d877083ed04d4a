// RecordInfo query (routedBy: channel) and its result fetched later by SN (routedBy: sn).
import { BadParameterError, RecordQueryNotFoundError } from '../../errors/catalog.ts';
import { missing, operator, type DeviceAccess } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, serial, time } from '../params.ts';

export function recordHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, 'record.query' | 'record.result'> {
  return {
    'record.query': async (ctx) => {
      const principal = operator(ctx);
      const channelId = gbId(ctx.query, 'channelId');
      const start = time(ctx.query, 'startTime', deps.utcOffsetMinutes);
      const end = time(ctx.query, 'endTime', deps.utcOffsetMinutes);
      if (end <= start) throw new BadParameterError('endTime', 'must be after startTime');
      const target = await access.onlineChannel(principal, channelId);
      const { sn } = await deps.control.queryRecords(target, { start, end });
      ctx.log.child({ deviceId: target.deviceId, channelId }).info({ sn }, 'record query sent');
      return { sn };
    },

    'record.result': async (ctx) => {
      const principal = operator(ctx);
      const sn = serial(ctx.query, 'sn');
      let result: Awaited<ReturnType<typeof deps.control.recordResult>>;
      try {
        result = await deps.control.recordResult(sn);
      } catch (err) {
        // SNs are a counter: for a tenant an unknown SN answers like another tenant's (SPEC SEC-2)
        if (err instanceof RecordQueryNotFoundError) throw missing(principal, sn, err);
        throw err;
      }
      await access.device(principal, result.deviceId); // 403 before anything is shown
      return result;
    },
  };
}
