// Upstream platform administration (SPEC CASC-2): the platforms this platform registers to and the
// channels each receives. Operator auth; answered from the database on any instance (not owner-routed).
// The registration follows edits at once when this instance leads; a leader elsewhere picks them up
// within PLATFORM_RESYNC_MS (src/cascade/README.md).
//
// SPEC SEC-2: every platform belongs to a tenant. A tenant token lists, creates, changes, deletes and
// shares only its own tenant's platforms, and shares only its own tenant's devices' channels (so an
// upstream it controls never receives another tenant's catalog nor live view). Another tenant's
// platform and a missing one answer a tenant the same 403 (no existence oracle); the all-tenant
// operator role sees every platform (404 for a missing one), may give `tenantId` and may share any
// device's channels, including devices not registered yet.
import { isCascadeError, upstreamPlatform, validateSharedChannel, type SharedChannel, type UpstreamPlatform, type UpstreamPlatformInput } from '@vms/cascade';
import { isOperator, mayAccessTenant, TENANT_ID, type Principal } from '../../auth/principal.ts';
import type { PlatformAdmin } from '../../cascade/platform-admin.port.ts';
import type { DeviceRepository } from '../../devices/device-repository.port.ts';
import { BadParameterError, ControlUnavailableError, PlatformNotFoundError, TenantForbiddenError } from '../../errors/catalog.ts';
import { missing, operator } from '../access.ts';
import type { HandlerContext, RouteHandler, RouteHandlers } from '../handler.types.ts';
import { gbId, optionalText } from '../params.ts';

type PlatformRouteId = 'platforms.list' | 'platforms.create' | 'platforms.update' | 'platforms.delete' | 'platforms.channels' | 'platforms.channels.replace';

/** Fields an operator may set; anything else in the body is ignored. `tenantId` only with the operator role. */
const INPUT_FIELDS = [
  'serverId', 'name', 'domain', 'host', 'port', 'transport', 'password', 'registerExpiresS', 'keepaliveIntervalS',
  'maxKeepaliveFailures', 'enabled', 'charset', 'localId', 'catalog',
] as const;

/** Most channels one PUT may share (the body limit bounds the bytes; this bounds the device lookups). */
export const MAX_SHARED_CHANNELS_PER_PUT = 10_000;

/** The record as the API shows it: the digest password is never echoed. */
function view(p: UpstreamPlatform): Record<string, unknown> {
  return { ...p, password: p.password === '' ? '' : '******' };
}

function objectBody(ctx: HandlerContext): Record<string, unknown> {
  const b = ctx.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new BadParameterError('body', 'must be a JSON object');
  return b as Record<string, unknown>;
}

/** CascadeError: validation → the API's bad-parameter answer naming the fields, unknown platform → not found (404); the rest propagate. */
async function translated<T>(serverId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isCascadeError(err) && err.code === 'CASCADE_ERR_PLATFORM_NOT_FOUND') throw new PlatformNotFoundError(serverId);
    if (isCascadeError(err) && (err.code === 'CASCADE_ERR_INVALID_PLATFORM' || err.code === 'CASCADE_ERR_INVALID_CHANNEL')) {
      throw new BadParameterError(err.fields.length === 0 ? 'platform' : err.fields.join(', '), err.message);
    }
    throw err;
  }
}

/** The tenant a create / update stores: the caller's, or (operator role only) the body's `tenantId`. */
function tenantOfBody(principal: Principal, body: Record<string, unknown>, current: string): string {
  const asked = body.tenantId;
  if (asked === undefined) return current;
  if (typeof asked !== 'string' || !TENANT_ID.test(asked)) throw new BadParameterError('tenantId', 'must be 1-12 characters of A-Z a-z 0-9 _ -');
  if (!isOperator(principal) && asked !== principal.tenantId) throw new TenantForbiddenError(asked);
  return asked;
}

export function platformHandlers(admin: PlatformAdmin | undefined, devices: Pick<DeviceRepository, 'getDevice'>): Pick<RouteHandlers, PlatformRouteId> {
  if (admin === undefined) {
    const unavailable: RouteHandler = async () => {
      throw new ControlUnavailableError('upstream platform administration');
    };
    return {
      'platforms.list': unavailable,
      'platforms.create': unavailable,
      'platforms.update': unavailable,
      'platforms.delete': unavailable,
      'platforms.channels': unavailable,
      'platforms.channels.replace': unavailable,
    };
  }
  const { platforms } = admin;

  const save = async (body: Record<string, unknown>, serverId: string, tenantId: string): Promise<UpstreamPlatform> => {
    const input: Record<string, unknown> = { localId: admin.localId };
    for (const k of INPUT_FIELDS) if (body[k] !== undefined) input[k] = body[k];
    input.serverId = serverId;
    input.tenantId = tenantId;
    const p = await translated(serverId, async () => {
      const record = upstreamPlatform(input as unknown as UpstreamPlatformInput);
      await platforms.upsert(record);
      return record;
    });
    await admin.platformChanged(p.serverId);
    return p;
  };
  /** The caller's platform: 403 another tenant's (and, for a tenant, a missing one), 404 missing for the operator role. */
  const existing = async (principal: Principal, serverId: string): Promise<UpstreamPlatform> => {
    const p = await platforms.get(serverId);
    if (p === null) throw missing(principal, serverId, new PlatformNotFoundError(serverId));
    if (!mayAccessTenant(principal, p.tenantId)) throw new TenantForbiddenError(serverId);
    return p;
  };
  /** SPEC SEC-2: every shared channel's device belongs to the platform's tenant (the operator role may name unknown devices). */
  const checkChannelTenants = async (principal: Principal, platform: UpstreamPlatform, channels: readonly SharedChannel[]): Promise<void> => {
    for (const deviceId of new Set(channels.map((c) => c.deviceId))) {
      const device = await devices.getDevice(deviceId);
      if (device === null ? !isOperator(principal) : device.tenantId !== platform.tenantId) throw new TenantForbiddenError(deviceId);
    }
  };

  return {
    'platforms.list': async (ctx) => {
      const principal = operator(ctx);
      const asked = optionalText(ctx.query, 'tenantId');
      if (asked !== undefined && !TENANT_ID.test(asked)) throw new BadParameterError('tenantId', 'must be 1-12 characters of A-Z a-z 0-9 _ -');
      if (asked !== undefined && !isOperator(principal) && asked !== principal.tenantId) throw new TenantForbiddenError(asked);
      const tenantId = isOperator(principal) ? asked : principal.tenantId;
      return (await platforms.listAll()).filter((p) => tenantId === undefined || p.tenantId === tenantId).map(view);
    },
    'platforms.create': async (ctx) => {
      const principal = operator(ctx);
      const body = objectBody(ctx);
      if (typeof body.serverId !== 'string') throw new BadParameterError('serverId', 'is required');
      const tenantId = tenantOfBody(principal, body, principal.tenantId);
      // server ids are unique across tenants: another tenant's platform is never overwritten
      const current = await platforms.get(body.serverId);
      if (current !== null && !mayAccessTenant(principal, current.tenantId)) throw new TenantForbiddenError(body.serverId);
      return view(await save(body, body.serverId, tenantId));
    },
    'platforms.update': async (ctx) => {
      const principal = operator(ctx);
      const serverId = gbId(ctx.params, 'serverId');
      const current = await existing(principal, serverId);
      const body = objectBody(ctx);
      const tenantId = tenantOfBody(principal, body, current.tenantId);
      if (tenantId !== current.tenantId && (await platforms.listChannels(serverId)).length > 0) {
        throw new BadParameterError('tenantId', 'cannot change while channels are shared: replace the channel list with [] first');
      }
      // a partial body edits the stored record; the password stays unless given
      return view(await save({ ...current, ...body }, serverId, tenantId));
    },
    'platforms.delete': async (ctx) => {
      const principal = operator(ctx);
      const serverId = gbId(ctx.params, 'serverId');
      await existing(principal, serverId);
      const removed = await platforms.remove(serverId);
      if (!removed) throw missing(principal, serverId, new PlatformNotFoundError(serverId));
      await admin.platformChanged(serverId);
      return { removed };
    },
    'platforms.channels': async (ctx) => {
      const serverId = gbId(ctx.params, 'serverId');
      await existing(operator(ctx), serverId);
      return platforms.listChannels(serverId);
    },
    'platforms.channels.replace': async (ctx) => {
      const principal = operator(ctx);
      const serverId = gbId(ctx.params, 'serverId');
      const raw = Array.isArray(ctx.body) ? ctx.body : objectBody(ctx).channels;
      if (!Array.isArray(raw)) throw new BadParameterError('channels', 'must be an array of {deviceId, channelId, catalogGroupId?, parentId?}');
      if (raw.length > MAX_SHARED_CHANNELS_PER_PUT) throw new BadParameterError('channels', `at most ${MAX_SHARED_CHANNELS_PER_PUT} channels per request`);
      const platform = await existing(principal, serverId);
      const channels = await translated(serverId, async () =>
        raw.map((c: unknown): SharedChannel => {
          const o = (c ?? {}) as Record<string, unknown>;
          return validateSharedChannel({
            deviceId: typeof o.deviceId === 'string' ? o.deviceId : '',
            channelId: typeof o.channelId === 'string' ? o.channelId : '',
            catalogGroupId: typeof o.catalogGroupId === 'string' ? o.catalogGroupId : null,
            parentId: typeof o.parentId === 'string' ? o.parentId : null,
          });
        }),
      );
      await checkChannelTenants(principal, platform, channels);
      await translated(serverId, () => platforms.replaceChannels(serverId, channels));
      return platforms.listChannels(serverId);
    },
  };
}
