// REGISTER (GB/T 28181-2016 §9.1): digest per register-auth.ts, Expires: 0 = unregister, the 200
// carries the GB `Date` header (devices set their clock from it, §9.10) and the granted `Expires`.
// SPEC SEC-1: a REGISTER that passed digest (when a password is set) is the only thing that binds a
// device to a flow (transport, source address, TCP connection) — every later request to the device
// goes there, and only requests from there count as the device's (message.handler.ts). The granted
// lifetime is capped (register-expires-max); one below register-expires-min gets 423 (RFC 3261 §10.3).
import { gbDateHeaderFormatter } from '@vms/gb28181';
import { detachString, formatNameAddr, getContacts, getExpires, getFrom, SipStatus, type DigestServer, type RequestContext, type RequestHandler, type SipRequest } from '@vms/sip';
import { isGbId } from '../core/gb-id.ts';
import { BadParameterError } from '../errors/catalog.ts';
import { transportOf } from './device-flows.ts';
import { edgeFlowOf } from './device-trust.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import { GB_VERSION_HEADER, gbVersionOf } from './gb-version.ts';
import { decideRegisterAuth, hasCredentials } from './register-auth.ts';
import { sipReplyFor, toCatalogError } from './sip-status.ts';

/** Lifetime granted when the device asks for none (RFC 3261 §10.2.1.1 leaves it to the registrar). */
export const DEFAULT_REGISTER_EXPIRES_SEC = 3600;

/** Expires header, else the first Contact's `expires` parameter, else the default (RFC 3261 §10.2.1.1). */
export function requestedExpires(req: SipRequest): number {
  const header = getExpires(req);
  if (header !== null) return header;
  for (const contact of getContacts(req)) {
    const p = contact.params.get('expires');
    if (p !== undefined && p !== null && /^\d{1,10}$/.test(p)) return Number(p);
  }
  return DEFAULT_REGISTER_EXPIRES_SEC;
}

/** The device id of a REGISTER: the From user (GB/T 28181 §9.1.2.1); the digest username may differ. */
export function registeringDevice(req: SipRequest): string {
  const user = getFrom(req).uri.user;
  if (user === null || !isGbId(user)) throw new BadParameterError('From', 'the device id must be a 20-digit code');
  // A copy: the id is kept as long as the device is registered (sessions, stores' caches, ownership),
  // and the From user as parsed is a slice that would keep the whole REGISTER's text with it.
  return detachString(user);
}

/** One `<uri>` and nothing else: no display name, no header parameter, no second contact. */
const PLAIN_CONTACT = /^<[^<>",\s]*>$/;

/**
 * The REGISTER's Contacts as the 200 lists them (RFC 3261 §10.3 step 8): each with `expires` set to the
 * lifetime granted, the wildcard left out. The usual single `<uri>` is answered as received with the
 * parameter appended, without a parse (issue 11: ~8k instructions per registration); any other form is
 * parsed and formatted again, an `expires` it carries replaced.
 */
export function boundContacts(req: SipRequest, expires: number): string[] {
  const lines = req.headers.getLines('Contact');
  if (lines.length === 1 && PLAIN_CONTACT.test(lines[0] as string)) return [`${lines[0] as string};expires=${expires}`];
  const out: string[] = [];
  for (const contact of getContacts(req)) {
    if (contact.wildcard === true) continue;
    const params = new Map(contact.params);
    params.set('expires', String(expires));
    out.push(formatNameAddr({ ...contact, params }));
  }
  return out;
}

export function createRegisterHandler(deps: DeviceSideDeps, digest: DigestServer): RequestHandler {
  const { devices, flows, events, clock } = deps;
  const gbDate = gbDateHeaderFormatter(deps.utcOffsetMinutes);
  const challenge = (ctx: RequestContext, now: number, deviceId: string, stale: boolean): void => {
    ctx.reply(SipStatus.Unauthorized, { headers: { 'WWW-Authenticate': digest.challengeHeader(now, { stale, subject: deviceId }) } });
  };

  return async (req, ctx) => {
    // Fields bound per log call, not with log.child(): a child logger per REGISTER cost ~2.5 % of a
    // registration storm's CPU (issue 11 profile), and the challenge leg logs nothing at the default level.
    const at: { callId: string | undefined; deviceId?: string } = { callId: req.headers.get('Call-ID') };
    const log = deps.log;
    try {
      const now = clock.now();
      const deviceId = registeringDevice(req);
      at.deviceId = deviceId;
      const requested = requestedExpires(req);
      // RFC 3261 §10.3 step 7, checked before the challenge so the device's retry needs one round trip.
      if (requested !== 0 && requested < deps.sip.registerExpiresMin) {
        log.info({ ...at, requested, min: deps.sip.registerExpiresMin }, 'register interval too brief');
        ctx.reply(SipStatus.IntervalTooBrief, { headers: { 'Min-Expires': String(deps.sip.registerExpiresMin) } });
        return;
      }
      const expires = Math.min(requested, deps.sip.registerExpiresMax); // SEC-1: granted lifetime capped
      const authorization = req.headers.get('Authorization');
      // No credentials while the platform has a password: challenged whatever the device's own password
      // (decideRegisterAuth would say the same), so the first leg of every registration reads no store.
      if (deps.sip.password !== null && !hasCredentials(authorization)) {
        challenge(ctx, now, deviceId, false);
        return;
      }
      const existing = await devices.getDevice(deviceId);
      const decision = decideRegisterAuth({
        authorization,
        password: existing?.password ?? deps.sip.password,
        deviceId,
        requestUri: req.rawUri,
        usernameRule: deps.sip.digestUsername,
        digest,
        now,
      });
      if (decision.kind === 'challenge') {
        if (log.isLevelEnabled('debug')) log.debug({ ...at, reason: decision.reason }, 'register challenged');
        challenge(ctx, now, deviceId, decision.stale);
        return;
      }
      if (decision.kind === 'forbidden') {
        log.warn({ ...at, reason: decision.reason, remote: `${ctx.flow.remoteAddress}:${ctx.flow.remotePort}` }, 'register refused');
        ctx.reply(SipStatus.Forbidden);
        return;
      }
      const date = gbDate(now);

      if (expires === 0) {
        flows.forget(deviceId);
        const changed = existing === null ? [] : await devices.markOffline([deviceId]);
        events.emit('uplink', { deviceId, at: now, kind: 'unregister' });
        if (changed.length > 0) events.emit('offline', { deviceId, at: now, reason: 'unregister' });
        log.info(at, 'device unregistered');
        ctx.reply(SipStatus.OK, { headers: { Date: date, Expires: '0' } });
        return;
      }

      // Issue 14, GB/T 28181-2022 §9.1.2.3: a device that follows redirects, authenticated, placed on another
      // shard. Its first REGISTER here (this instance acting as redirect server) gets 302 to the shard; a
      // refresh of a registration held here (the shard is draining or placement moved) gets 403, which per
      // the standard sends the device back to the redirect server, which then answers 302.
      const placement = deps.placement;
      // Through a SIP edge the edge has placed it already: never redirected past the edge.
      if (placement?.redirects(deviceId, req.headers.get('X-GB-ver') ?? undefined) === true && edgeFlowOf(req) === null) {
        const verdict = placement.place(deviceId);
        if (verdict.kind === 'elsewhere') {
          const { shard } = verdict;
          if (flows.get(deviceId) !== undefined) {
            flows.forget(deviceId);
            log.info({ shard: shard.code }, 'register refused: placed on another shard');
            ctx.reply(SipStatus.Forbidden);
            return;
          }
          const host = shard.sipHost.includes(':') ? `[${shard.sipHost}]` : shard.sipHost;
          log.info({ shard: shard.code }, 'register redirected');
          ctx.reply(SipStatus.MovedTemporarily, {
            headers: { Contact: `<sip:${deps.sip.serverId}@${host}:${shard.sipPort}>`, Expires: String(expires), Date: date },
          });
          return;
        }
      }

      const transport = transportOf(ctx.flow);
      const device = await devices.registerDevice({
        deviceId,
        transport,
        remoteIp: ctx.flow.remoteAddress,
        remotePort: ctx.flow.remotePort,
        expiresSec: expires,
        at: now,
      });
      const previous = flows.get(deviceId);
      const gbVersion = gbVersionOf(req.headers.get(GB_VERSION_HEADER), deviceId, deps.sip.gb2022Devices);
      // Issue 14: through a SIP edge, bound to the edge's flow and the device flow it names; reached back by Path.
      const edgeFlow = edgeFlowOf(req);
      const path = edgeFlow === null ? null : (req.headers.get('Path') ?? null);
      flows.register({ deviceId, flow: ctx.flow, charset: previous?.charset ?? device.charset, gbVersion, registeredAt: now, expiresAt: now + expires * 1000, edgeFlow, path });
      events.emit('uplink', { deviceId, at: now, kind: 'register' });
      const cameOnline = existing?.online !== true;
      if (cameOnline) events.emit('online', { deviceId, at: now, reason: 'register' });
      if (log.isLevelEnabled('info')) {
        // the fields are built only when written (a storm runs at warn or above: issue 11)
        log.info(
          { ...at, transport, remote: `${ctx.flow.remoteAddress}:${ctx.flow.remotePort}`, gbVersion, expires, requested, username: decision.username, refresh: !cameOnline },
          'device registered',
        );
      }
      const headers: [string, string][] = [
        ['Date', date],
        ['Expires', String(expires)],
      ];
      // RFC 3261 §10.3 step 8: the current binding, with the lifetime granted (devices read it there first)
      for (const contact of boundContacts(req, expires)) headers.push(['Contact', contact]);
      ctx.reply(SipStatus.OK, { headers });
    } catch (err) {
      const failure = toCatalogError(err);
      const { status, headers } = sipReplyFor(failure);
      if (status >= 500) log.error({ ...at, err }, 'register handling failed');
      else log.info({ ...at, code: failure.code, reason: failure.message }, 'register refused');
      if (!ctx.finalSent) ctx.reply(status, { headers });
    }
  };
}
