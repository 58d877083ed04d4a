// Alarms and mobile positions devices reported (GB/T 28181 §9.4, §9.11), answered from the report
// store on any instance (routedBy: null; the store is the cluster's MySQL or this instance's memory),
// and the owner's subscriptions to a device (routedBy: device). Tenant-checked before anything is read.
import type { GbLocalTime } from '../../core/gb-time.ts';
import { BadParameterError, ControlUnavailableError } from '../../errors/catalog.ts';
import { pageView } from '../views.ts';
import { createMemoryReportStore } from '../../reports/report-store.memory.ts';
import { SUBSCRIPTION_KINDS } from '../../reports/report-store.port.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';
import { type RawParams, gbId, oneOf, optionalBoolean, optionalInt, optionalText, paging, time } from '../params.ts';

type Ids = 'alarms.list' | 'positions.latest' | 'positions.track' | 'subscriptions.get' | 'subscriptions.set';

/** MobilePosition report interval bounds, seconds (§A.2.4 leaves them to the platform). */
export const POSITION_INTERVAL_MIN_S = 1;
export const POSITION_INTERVAL_MAX_S = 3600;

/** GB wall-clock time in the platform zone → epoch ms. */
const epochOf = (t: GbLocalTime, utcOffsetMinutes: number): number => Date.parse(`${t}Z`) - utcOffsetMinutes * 60_000;

export function reportHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, Ids> {
  const store = deps.reports ?? createMemoryReportStore();
  const range = (q: RawParams): { from?: number; to?: number } => {
    const from = optionalText(q, 'startTime') === undefined ? undefined : epochOf(time(q, 'startTime', deps.utcOffsetMinutes), deps.utcOffsetMinutes);
    const to = optionalText(q, 'endTime') === undefined ? undefined : epochOf(time(q, 'endTime', deps.utcOffsetMinutes), deps.utcOffsetMinutes);
    if (from !== undefined && to !== undefined && to < from) throw new BadParameterError('endTime', 'must not be before startTime');
    return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  };
  const subscriptions = (): NonNullable<HttpDeps['subscriptions']> => {
    if (deps.subscriptions === undefined) throw new ControlUnavailableError('device subscriptions');
    return deps.subscriptions;
  };
  const filter = (q: RawParams, name: string): { [k: string]: string } => {
    const v = optionalText(q, name);
    if (v === undefined) return {};
    if (!/^\d{1,4}$/.test(v)) throw new BadParameterError(name, 'must be 1-4 digits');
    return { [name === 'alarmMethod' ? 'method' : name === 'alarmType' ? 'type' : 'priority']: v };
  };

  return {
    'alarms.list': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      const q = ctx.query;
      const page = await store.listAlarms({ deviceId: device.deviceId, ...range(q), ...filter(q, 'alarmMethod'), ...filter(q, 'alarmType'), ...filter(q, 'alarmPriority') }, paging(q));
      return pageView(page, (a) => a);
    },

    'positions.latest': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      return store.latestPosition(device.deviceId);
    },

    'positions.track': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      const page = await store.track({ deviceId: device.deviceId, ...range(ctx.query) }, paging(ctx.query));
      return pageView(page, (p) => p);
    },

    'subscriptions.get': async (ctx) => {
      const device = await access.device(operator(ctx), gbId(ctx.query, 'deviceId'));
      return subscriptions().view(device.deviceId);
    },

    'subscriptions.set': async (ctx) => {
      const q = ctx.query;
      const deviceId = gbId(q, 'deviceId');
      const kind = oneOf(q, 'kind', SUBSCRIPTION_KINDS);
      const enabled = optionalBoolean(q, 'enabled');
      if (enabled === undefined) throw new BadParameterError('enabled', 'must be true or false');
      const interval = optionalInt(q, 'interval', POSITION_INTERVAL_MIN_S, POSITION_INTERVAL_MAX_S);
      const device = await (enabled ? access.onlineDevice(operator(ctx), deviceId) : access.device(operator(ctx), deviceId));
      ctx.log.child({ deviceId }).info({ kind, enabled }, 'device subscription changed');
      return subscriptions().set(device.deviceId, kind, enabled, interval);
    },
  };
}
