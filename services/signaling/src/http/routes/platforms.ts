// Upstream platform administration (SPEC CASC-2): the platforms this platform registers to and the
// channels each receives. Operator auth; answered from the database on any instance (not owner-routed).
// The registration follows edits at once when this instance leads; a leader elsewhere picks them up
// within PLATFORM_RESYNC_MS (src/cascade/README.md).
import { isCascadeError, upstreamPlatform, validateSharedChannel, type SharedChannel, type UpstreamPlatform, type UpstreamPlatformInput } from '@vms/cascade';
import type { PlatformAdmin } from '../../cascade/platform-admin.port.ts';
import { BadParameterError, ControlUnavailableError, PlatformNotFoundError } from '../../errors/catalog.ts';
import type { HandlerContext, RouteHandler, RouteHandlers } from '../handler.types.ts';
import { gbId } from '../params.ts';

type PlatformRouteId = 'platforms.list' | 'platforms.create' | 'platforms.update' | 'platforms.delete' | 'platforms.channels' | 'platforms.channels.replace';

/** Fields an operator may set; anything else in the body is ignored. */
const INPUT_FIELDS = [
  'serverId', 'name', 'domain', 'host', 'port', 'transport', 'password', 'registerExpiresS', 'keepaliveIntervalS',
  'maxKeepaliveFailures', 'enabled', 'charset', 'localId', 'catalog',
] as const;

/** The record as the API shows it: the digest password is never echoed. */
function view(p: UpstreamPlatform): Record<string, unknown> {
  return { ...p, password: p.password === '' ? '' : '******' };
}

function objectBody(ctx: HandlerContext): Record<string, unknown> {
  const b = ctx.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new BadParameterError('body', 'must be a JSON object');
  return b as Record<string, unknown>;
}

/** CascadeError: validation → the API's bad-parameter answer, unknown platform → not found (404); the rest propagate. */
async function translated<T>(serverId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isCascadeError(err) && err.code === 'CASCADE_ERR_PLATFORM_NOT_FOUND') throw new PlatformNotFoundError(serverId);
    if (isCascadeError(err) && (err.code === 'CASCADE_ERR_INVALID_PLATFORM' || err.code === 'CASCADE_ERR_INVALID_CHANNEL')) {
      throw new BadParameterError('platform', err.message);
    }
    throw err;
  }
}

export function platformHandlers(admin: PlatformAdmin | undefined): Pick<RouteHandlers, PlatformRouteId> {
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

  const save = async (body: Record<string, unknown>, serverId: string): Promise<UpstreamPlatform> => {
    const input: Record<string, unknown> = { localId: admin.localId };
    for (const k of INPUT_FIELDS) if (body[k] !== undefined) input[k] = body[k];
    input.serverId = serverId;
    const p = await translated(serverId, async () => {
      const record = upstreamPlatform(input as unknown as UpstreamPlatformInput);
      await platforms.upsert(record);
      return record;
    });
    await admin.platformChanged(p.serverId);
    return p;
  };
  const existing = async (serverId: string): Promise<UpstreamPlatform> => {
    const p = await platforms.get(serverId);
    if (p === null) throw new PlatformNotFoundError(serverId);
    return p;
  };

  return {
    'platforms.list': async () => (await platforms.listAll()).map(view),
    'platforms.create': async (ctx) => {
      const body = objectBody(ctx);
      if (typeof body.serverId !== 'string') throw new BadParameterError('serverId', 'is required');
      return view(await save(body, body.serverId));
    },
    'platforms.update': async (ctx) => {
      const serverId = gbId(ctx.params, 'serverId');
      const current = await existing(serverId);
      // a partial body edits the stored record; the password stays unless given
      return view(await save({ ...current, ...objectBody(ctx) }, serverId));
    },
    'platforms.delete': async (ctx) => {
      const serverId = gbId(ctx.params, 'serverId');
      const removed = await platforms.remove(serverId);
      if (!removed) throw new PlatformNotFoundError(serverId);
      await admin.platformChanged(serverId);
      return { removed };
    },
    'platforms.channels': async (ctx) => {
      const serverId = gbId(ctx.params, 'serverId');
      await existing(serverId);
      return platforms.listChannels(serverId);
    },
    'platforms.channels.replace': async (ctx) => {
      const serverId = gbId(ctx.params, 'serverId');
      const raw = Array.isArray(ctx.body) ? ctx.body : objectBody(ctx).channels;
      if (!Array.isArray(raw)) throw new BadParameterError('channels', 'must be an array of {deviceId, channelId, catalogGroupId?, parentId?}');
      await existing(serverId);
      const channels = await translated(serverId, async () =>
        raw.map((c: unknown): SharedChannel => {
          const o = (c ?? {}) as Record<string, unknown>;
          return validateSharedChannel({
            deviceId: String(o.deviceId ?? ''),
            channelId: String(o.channelId ?? ''),
            catalogGroupId: typeof o.catalogGroupId === 'string' ? o.catalogGroupId : null,
            parentId: typeof o.parentId === 'string' ? o.parentId : null,
          });
        }),
      );
      await translated(serverId, () => platforms.replaceChannels(serverId, channels));
      return platforms.listChannels(serverId);
    },
  };
}
