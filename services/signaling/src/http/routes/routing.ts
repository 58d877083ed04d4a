// Routing engine administration (SPEC §10): draft destinations, sets and rules; validate, publish (bumps
// the version, nudges every instance), roll back in one call; the decision explained for any request;
// shadow mode on/off and its report. Answered on any instance from the routing store (not owner-routed).
//
// Operator role: these endpoints change every tenant's routing, so they need the all-tenant operator
// role (SPEC SEC-2: an explicit claim, `npm run token -- --operator`); a tenant token gets 403.
import {
  ALGORITHMS,
  isRoutingError,
  MATCH_FIELDS,
  validateTable,
  type Algorithm,
  type Destination,
  type DestinationSet,
  type DraftRule,
  type MatchField,
  type RoutingTable,
  effectiveState,
  type DestinationHealth,
} from '@vms/routing';
import type { RoutingWiring } from '../../routing/routing-wiring.ts';
import { BadParameterError, ControlUnavailableError } from '../../errors/catalog.ts';
import { operatorRole } from '../access.ts';
import type { HandlerContext, RouteHandler, RouteHandlers } from '../handler.types.ts';
import { optionalInt, optionalText, requiredText } from '../params.ts';

type RoutingRouteId =
  | 'routing.draft'
  | 'routing.destinations.put'
  | 'routing.destinations.delete'
  | 'routing.sets.put'
  | 'routing.sets.delete'
  | 'routing.rules.create'
  | 'routing.rules.update'
  | 'routing.rules.delete'
  | 'routing.validate'
  | 'routing.publish'
  | 'routing.rollback'
  | 'routing.versions'
  | 'routing.decide'
  | 'routing.shadow.start'
  | 'routing.shadow.stop'
  | 'routing.shadow.report'
  | 'routing.health.list'
  | 'routing.health.set';

const MAX_MEMBERS = 1000;

/** SPEC SEC-2: the all-tenant operator role is an explicit claim, `role: "operator"`. */

function objectBody(ctx: HandlerContext): Record<string, unknown> {
  const b = ctx.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new BadParameterError('body', 'must be a JSON object');
  return b as Record<string, unknown>;
}

const text = (b: Record<string, unknown>, name: string, max: number, required = true): string | undefined => {
  const v = b[name];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.length > max || (required && v === '')) throw new BadParameterError(name, `must be text of 1..${max} characters`);
  return v;
};
const int = (b: Record<string, unknown>, name: string, min: number, max: number, fallback?: number): number => {
  const v = b[name] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new BadParameterError(name, `must be an integer ${min}..${max}`);
  return v;
};
const objectOrUndefined = <T>(b: Record<string, unknown>, name: string): T | undefined => {
  const v = b[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new BadParameterError(name, 'must be an object');
  return v as T;
};

function destinationOf(id: string, b: Record<string, unknown>): Destination {
  const kind = text(b, 'kind', 16)!;
  if (!['sip', 'http', 'media', 'shard'].includes(kind)) throw new BadParameterError('kind', 'must be one of sip, http, media, shard');
  const attrs = objectOrUndefined<Record<string, unknown>>(b, 'attrs');
  if (attrs !== undefined && !Object.values(attrs).every((v) => typeof v === 'string')) throw new BadParameterError('attrs', 'values must be text');
  return { id, kind: kind as Destination['kind'], address: text(b, 'address', 512)!, ...(attrs === undefined ? {} : { attrs: attrs as Record<string, string> }) };
}

function setOf(id: string, b: Record<string, unknown>): DestinationSet {
  const algorithm = text(b, 'algorithm', 32)!;
  if (!(ALGORITHMS as readonly string[]).includes(algorithm)) throw new BadParameterError('algorithm', `must be one of ${ALGORITHMS.join(', ')}`);
  const members = b.members;
  if (!Array.isArray(members) || members.length > MAX_MEMBERS) throw new BadParameterError('members', `must be a list of at most ${MAX_MEMBERS}`);
  return {
    id,
    algorithm: algorithm as Algorithm,
    members: members.map((m: unknown) => {
      if (m === null || typeof m !== 'object') throw new BadParameterError('members', 'each member must be an object');
      const o = m as Record<string, unknown>;
      return { destinationId: text(o, 'destinationId', 128)!, weight: int(o, 'weight', 0, 1_000_000, 1), priority: int(o, 'priority', -1_000_000, 1_000_000, 0) };
    }),
  };
}

function ruleOf(id: number, b: Record<string, unknown>): DraftRule {
  const field = text(b, 'field', 16)!;
  if (!(MATCH_FIELDS as readonly string[]).includes(field)) throw new BadParameterError('field', `must be one of ${MATCH_FIELDS.join(', ')}`);
  const prefix = b.prefix ?? '';
  if (typeof prefix !== 'string' || !/^\d{0,24}$/.test(prefix)) throw new BadParameterError('prefix', 'must be 0..24 digits');
  const enabled = b.enabled ?? true;
  if (typeof enabled !== 'boolean') throw new BadParameterError('enabled', 'must be true or false');
  const window = objectOrUndefined<DraftRule['window']>(b, 'window');
  const release = objectOrUndefined<DraftRule['release']>(b, 'release');
  return {
    id,
    group: text(b, 'group', 128)!,
    field: field as MatchField,
    prefix,
    priority: int(b, 'priority', -1_000_000, 1_000_000, 0),
    setId: text(b, 'setId', 128)!,
    enabled,
    ...(window === undefined ? {} : { window }),
    ...(release === undefined ? {} : { release }),
  };
}

const idParam = (ctx: HandlerContext, name: string): string => {
  const v = requiredText(ctx.params, name);
  if (v.length > 128) throw new BadParameterError(name, 'must be at most 128 characters');
  return v;
};
const ruleIdParam = (ctx: HandlerContext): number => {
  const v = requiredText(ctx.params, 'ruleId');
  if (!/^[1-9]\d{0,14}$/.test(v)) throw new BadParameterError('ruleId', 'must be a positive integer');
  return Number(v);
};

const MANUAL_ACTIONS = ['disabled', 'enabled', 'auto'] as const;

/** A destination's health as the API shows it: the state decisions use, and why. */
function healthView(id: string, h: DestinationHealth | undefined): unknown {
  if (h === undefined) return { destinationId: id, state: 'active', auto: 'active', manual: null, probeFailures: 0, probeSuccesses: 0, businessFailures: 0, since: null };
  return { destinationId: id, state: effectiveState(h), ...h, manual: h.manual ?? null };
}

function explain(table: RoutingTable, ctx: HandlerContext, now: number): unknown {
  const q = ctx.query;
  const source = optionalText(q, 'source');
  const d = table.decide({
    group: requiredText(q, 'group'),
    now,
    device: optionalText(q, 'device'),
    caller: optionalText(q, 'caller'),
    callee: optionalText(q, 'callee'),
    callId: optionalText(q, 'callId'),
    from: optionalText(q, 'from'),
    to: optionalText(q, 'to'),
    source,
  });
  return { ...d, destination: d.destination ?? null };
}

export function routingHandlers(routing: RoutingWiring | undefined): Pick<RouteHandlers, RoutingRouteId> {
  const guarded = (h: (ctx: HandlerContext, r: RoutingWiring) => Promise<unknown>): RouteHandler => {
    return async (ctx) => {
      operatorRole(ctx, 'routing administration');
      if (routing === undefined) throw new ControlUnavailableError('routing administration');
      try {
        return await h(ctx, routing);
      } catch (err) {
        if (isRoutingError(err) && err.code === 'ROUTING_ERR_NOTHING_TO_ROLL_BACK') throw new BadParameterError('version', err.message);
        throw err;
      }
    };
  };
  const check = (r: RoutingWiring) => (data: Parameters<Parameters<RoutingWiring['store']['publish']>[0]['check']>[0]) => {
    const v = validateTable({ ...data, timeZone: r.timeZone });
    // valid: it is being written now; a large one's build threads start while the store copies its rules
    if (v.issues.length === 0) r.prepareBuild(data.rules.length);
    return v;
  };

  return {
    'routing.draft': guarded(async (_ctx, r) => r.store.draft()),
    'routing.destinations.put': guarded(async (ctx, r) => {
      const d = destinationOf(idParam(ctx, 'destinationId'), objectBody(ctx));
      await r.store.putDestination(d);
      return d;
    }),
    'routing.destinations.delete': guarded(async (ctx, r) => ({ deleted: await r.store.removeDestination(idParam(ctx, 'destinationId')) })),
    'routing.sets.put': guarded(async (ctx, r) => {
      const s = setOf(idParam(ctx, 'setId'), objectBody(ctx));
      await r.store.putSet(s);
      return s;
    }),
    'routing.sets.delete': guarded(async (ctx, r) => ({ deleted: await r.store.removeSet(idParam(ctx, 'setId')) })),
    'routing.rules.create': guarded(async (ctx, r) => {
      const { id: _id, ...rule } = ruleOf(0, objectBody(ctx));
      return { ...rule, id: await r.store.addRule(rule) };
    }),
    'routing.rules.update': guarded(async (ctx, r) => {
      const rule = ruleOf(ruleIdParam(ctx), objectBody(ctx));
      return { updated: await r.store.putRule(rule) };
    }),
    'routing.rules.delete': guarded(async (ctx, r) => ({ deleted: await r.store.removeRule(ruleIdParam(ctx)) })),
    'routing.validate': guarded(async (_ctx, r) => {
      const draft = await r.store.draft();
      const v = validateTable({ version: 0, timeZone: r.timeZone, destinations: draft.destinations, sets: draft.sets, rules: draft.rules.filter((x) => x.enabled) });
      return { valid: v.issues.length === 0, issues: v.issues, more: v.more };
    }),
    'routing.publish': guarded(async (ctx, r) => {
      const comment = optionalText(ctx.query, 'comment') ?? '';
      const p = await r.store.publish({ by: ctx.principal?.userId ?? '', comment, check: check(r) });
      if (!p.ok) return { published: false, issues: p.issues, more: p.more };
      ctx.log.info({ version: p.version, rules: p.ruleCount }, 'routing table published');
      await r.nudge(p.version);
      return { published: true, version: p.version, ruleCount: p.ruleCount };
    }),
    'routing.rollback': guarded(async (ctx, r) => {
      const back = await r.store.rollback();
      ctx.log.info(back, 'routing table rolled back');
      await r.nudge(back.to);
      return back;
    }),
    'routing.versions': guarded(async (ctx, r) => ({
      current: await r.store.currentVersion(),
      inForce: r.reloader.stats,
      versions: await r.store.versions(optionalInt(ctx.query, 'limit', 1, 1000) ?? 20),
    })),
    'routing.decide': guarded(async (ctx, r) => {
      const shadow = r.shadow.table();
      const now = r.now();
      return { live: explain(r.reloader.table, ctx, now), ...(shadow === undefined ? {} : { shadow: explain(shadow, ctx, now) }) };
    }),
    'routing.shadow.start': guarded(async (ctx, r) => {
      const version = optionalInt(ctx.query, 'version', 1, Number.MAX_SAFE_INTEGER);
      if (version === undefined) throw new BadParameterError('version', 'is required');
      const started = await r.shadow.start(version);
      if (!started.ok) return { shadow: false, issues: started.issues };
      return { shadow: true, version };
    }),
    'routing.shadow.stop': guarded(async (_ctx, r) => {
      r.shadow.stop();
      return { shadow: false };
    }),
    'routing.shadow.report': guarded(async (_ctx, r) => r.shadow.comparator.report()),
    // Destination health (shared through Redis in a cluster): the table's destinations and every one
    // something was recorded about (media nodes included), sorted by id.
    'routing.health.list': guarded(async (_ctx, r) => {
      await r.health.refresh();
      const all = r.health.all();
      const ids = new Set<string>(all.keys());
      for (const d of r.reloader.table.destinations()) ids.add(d.id);
      return { destinations: [...ids].sort().map((id) => healthView(id, all.get(id))) };
    }),
    // An operator's disable / enable, which probing never undoes, until 'auto' (OpenSIPS drouting's MI
    // dr_disable works the same); every instance sees it within one probe interval, at once by the change
    // channel. Only a destination of the table in force or a media node: no record for a made-up id.
    'routing.health.set': guarded(async (ctx, r) => {
      const id = idParam(ctx, 'destinationId');
      const manual = objectBody(ctx).manual;
      if (typeof manual !== 'string' || !(MANUAL_ACTIONS as readonly string[]).includes(manual)) {
        throw new BadParameterError('manual', `must be one of ${MANUAL_ACTIONS.join(', ')}`);
      }
      if (!r.isKnownDestination(id)) throw new BadParameterError('destinationId', 'is not a destination of the table in force nor a media node');
      const h = await r.health.setManual(id, manual as (typeof MANUAL_ACTIONS)[number]);
      ctx.log.info({ destinationId: id, manual, by: ctx.principal?.userId ?? '' }, 'routing destination manual override');
      return healthView(id, h);
    }),
  };
}
