// MESSAGE from devices (GB/T 28181-2016 §9.3-§9.7, MANSCDP bodies).
//
// Keepalive is the hot path (one per device per minute, fleet-wide): a validating scan recognises the
// common body shapes without the XML codec (@vms/gb28181 scanKeepalive), the registration is found in
// memory, the keepalive time is recorded synchronously (the MySQL store batches it, OWN-5) and 200
// goes out statelessly (RFC 3261 §8.2.7, nothing kept per keepalive); the only store call is
// markOnline, not awaited, when the device had been marked offline. Whenever the shortcut is not sure
// it gives the same answer as the full path, it declines and the full path answers.
//
// Everything else is parsed, answered 200, then handed to manscdp-uplink.ts. SPEC SEC-1 (device-trust.ts):
// only a request from the flow the device's verified REGISTER bound counts as the device's — the
// shortcut checks it with a few comparisons, the full path answers any other flow 401 with a challenge
// for that device id, and nothing changes (no keepalive time, no ownership renewal, nothing stored).
// A request from a device not registered here is answered 404 (WVP's practice; devices re-REGISTER
// after failed keepalives), except that a device the store still has online within its registration
// lifetime (registered on an instance that died, or on this one before a restart) gets 401: only a
// verified REGISTER makes this instance act for it (SEC-1, OWN-1). Through a SIP edge such a device (moved
// here by placement) gets 404 as well, at once and without a store read (see sessionOf).
import { decodeManscdpCommand, keepaliveShapeOf, parseManscdp, scanKeepalive, type ManscdpCharset, type ManscdpCommand, type ManscdpMessage } from '@vms/gb28181';
import { getContentType, getFrom, SipStatus, type Flow, type RequestHandler, type SipRequest, type StatelessHandler } from '@vms/sip';
import type { Logger } from 'pino';
import type { Charset, DeviceId } from '../devices/device.types.ts';
import { BadParameterError, DeviceOfflineError, RateLimitedError, type VmsError } from '../errors/catalog.ts';
import type { UplinkKind } from '../events/device-events.ts';
import { addressMatcher, createAddressBuckets, createDeviceAdmission, DEFAULT_DEVICE_LIMITS, LANE_ABOVE_BYTES, messageCost } from './device-admission.ts';
import { createManscdpParsePool, DEFAULT_PARSE_LIMITS, ParseQueueFullError, ParseRefusedError } from './manscdp-parse-pool.ts';
import type { DeviceSession } from './device-flows.ts';
import { edgeFlowOf, edgeFlowOfViaLine, sameDeviceFlow, sameFlow } from './device-trust.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { ManscdpUplink } from './manscdp-uplink.ts';
import { sipReplyFor, toCatalogError } from './sip-status.ts';

const MANSCDP_MEDIA_TYPE = 'application/manscdp+xml';
/** How devices write it (and the GB/T 28181 examples). */
const DEVICE_SPELLING = 'Application/MANSCDP+xml';

/**
 * The full path's content-type rule, for the only spelling the shortcut takes: absent, or the MANSCDP
 * media type alone in any letter case (devices write `Application/MANSCDP+xml`). Parameters or
 * anything else: the full path decides (415 for another type). The devices' own spelling is compared
 * as is first (no lower-cased copy).
 */
function isPlainManscdpType(raw: string | undefined): boolean {
  if (raw === undefined) return true;
  return raw.length === MANSCDP_MEDIA_TYPE.length && (raw === DEVICE_SPELLING || raw.toLowerCase() === MANSCDP_MEDIA_TYPE);
}

/**
 * Whether the From URI's user is `deviceId`: the full path names the sender by From (`<sip:id@…>` or
 * a bare `sip:id@…`), not by the body's DeviceID, so the shortcut only answers when both agree.
 * The user is found with `indexOf` from where it must start (a native search that matches there at
 * once): `startsWith(deviceId, …)` with a search string that is not a constant becomes a charCodeAt loop
 * over two sliced strings in optimised code (~1.5k instructions per keepalive under callgrind), and
 * `slice(…) === deviceId` compares two sliced strings in a runtime call (docs/benchmarks.md).
 */
export function fromUserIs(from: string, deviceId: string): boolean {
  const open = from.charCodeAt(0) === 60 /* < */ ? 0 : from.indexOf('<');
  if (open > 0 && !isPlainDisplayName(from, open)) return false;
  const uri = open < 0 ? 0 : open + 1;
  const user = uri + 4;
  const at = user + deviceId.length;
  // `@` at `at`, so the user is deviceId exactly when deviceId occurs at `user`
  if (from.charCodeAt(at) !== 64 /* @ */ || !from.startsWith('sip:', uri) || from.indexOf(deviceId, user) !== user) return false;
  return open < 0 || from.indexOf('>', at) > at;
}

/**
 * The start of `from` that fromUserIs(from, deviceId) reads, through the `>` after the user's `@`, when it
 * passes and the URI is in `<…>`; undefined otherwise (a bare URI: fromUserIs also needs no `<` further
 * on). A From that starts with it passes fromUserIs for the same id: the display name, the `<`, `sip:`,
 * the user, the `@` and a `>` after it all lie in this start (fromStartsWith). A flat copy: a slice of the
 * datagram would keep the datagram alive with the session.
 */
export function fromPrefixOf(from: string, deviceId: string): string | undefined {
  if (!fromUserIs(from, deviceId)) return undefined;
  const open = from.indexOf('<');
  if (open < 0) return undefined;
  const close = from.indexOf('>', open + 1 + 'sip:'.length + deviceId.length);
  return Buffer.from(from.slice(0, close + 1), 'latin1').toString('latin1');
}

/**
 * Whether `from` starts with `prefix` (a fromPrefixOf): one native search that matches at once, where
 * fromUserIs makes two and its checks around them (~0.9k instructions per keepalive under callgrind
 * against ~0.3k; `startsWith` with a search string that is not a constant is a charCodeAt loop).
 */
export const fromStartsWith = (from: string, prefix: string): boolean => from.length >= prefix.length && from.indexOf(prefix) === 0;

/** `"quoted"` or letters, digits, spaces before the `<` (a quoted `<` or an escape: not plain). */
function isPlainDisplayName(from: string, open: number): boolean {
  let end = open;
  while (end > 0 && from.charCodeAt(end - 1) === 32) end--;
  const quoted = from.charCodeAt(0) === 34 && end >= 2 && from.charCodeAt(end - 1) === 34;
  for (let i = quoted ? 1 : 0; i < (quoted ? end - 1 : end); i++) {
    const c = from.charCodeAt(i);
    const ok = c === 32 || c === 45 || c === 46 || c === 95 || (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122);
    if (!ok) return false;
  }
  return true;
}

export const domainCharset = (c: ManscdpCharset): Charset => (c === 'UTF-8' ? 'UTF-8' : 'GB2312');

export interface MessageHandlers {
  /** For `stack.onStatelessRequest('MESSAGE', …)`. */
  readonly keepalive: (...args: Parameters<StatelessHandler>) => number | undefined;
  /** For `stack.onRequest('MESSAGE', …)`. */
  readonly message: RequestHandler;
  /** Stops the large-body decode threads (messages still decoding are answered as failures). */
  close(): Promise<void>;
  /** The same bounds for a device's other requests (NOTIFY, device-notify.handler.ts). */
  readonly intake: DeviceIntake;
}

/** SEC-3 bounds every device request with a MANSCDP body passes, whatever its method. */
export interface DeviceIntake {
  /** The device's rate bucket; a refusal to answer, or undefined. */
  charge(deviceId: DeviceId, bytes: number, now: number, log: Logger): VmsError | undefined;
  /** Decodes small bodies here, large ones on a decode thread; RateLimitedError when that queue is full. */
  decode(body: Buffer, deviceId: DeviceId, log: Logger): Promise<{ msg: ManscdpMessage; cmd: ManscdpCommand }>;
  /** The channel cap of a catalog body; a refusal, or undefined. */
  admit(session: DeviceSession, cmd: ManscdpCommand, now: number, log: Logger): Promise<VmsError | undefined>;
}

/** The WWW-Authenticate value of a 401 for `deviceId` (a nonce issued for that device id). */
export type DeviceChallenge = (deviceId: DeviceId, now: number) => string;

/** Why a request does not speak for a device here (answered 401: register, from this flow, first). */
class UnboundRequest {
  constructor(readonly reason: 'other flow' | 'registered elsewhere or before a restart') {}
}

export function createMessageHandlers(deps: DeviceSideDeps, uplink: ManscdpUplink, challenge: DeviceChallenge): MessageHandlers {
  const { devices, flows, events, clock } = deps;
  // SPEC SEC-3: per-device message rate and channel cap, checked before a MESSAGE is answered
  const limits = deps.limits ?? DEFAULT_DEVICE_LIMITS;
  const admission = createDeviceAdmission(devices, flows, limits);
  const unbound = createAddressBuckets(limits.unboundRatePerSec, limits.unboundBurst);
  // Behind a SIP edge every device shares the edge's address: the edge's traffic is charged per device flow
  // it names (its top Via), which only a configured edge address is trusted to name (issue 14).
  const edges = addressMatcher(limits.edgeAddresses);
  let unboundRefused = 0;
  let unboundLoggedAt = -Infinity;
  const decoder = createManscdpParsePool({ ...DEFAULT_PARSE_LIMITS, threads: limits.largeBodyDecodeThreads, maxQueued: limits.largeBodyDecodeQueue }, deps.log);
  /** The body decoded: small ones here, large ones on a decode thread (SEC-3: no long block on device input). */
  const decode = async (body: Buffer, deviceId: string | null, log: Logger): Promise<{ msg: ManscdpMessage; cmd: ManscdpCommand }> => {
    if (body.length <= LANE_ABOVE_BYTES) {
      const msg = parseManscdp(body);
      return { msg, cmd: decodeManscdpCommand(msg) };
    }
    try {
      return await decoder.parse(body);
    } catch (err) {
      if (err instanceof ParseRefusedError) throw new BadParameterError('body', err.message);
      if (err instanceof ParseQueueFullError) {
        log.warn({ pending: decoder.pending }, 'large-body decode queue full: message refused');
        throw new RateLimitedError(deviceId ?? 'unknown');
      }
      throw err;
    }
  };
  const refuse = (ctx: Parameters<RequestHandler>[1], err: VmsError): void => {
    const { status, headers } = sipReplyFor(err);
    ctx.reply(status, { headers });
  };

  /** Liveness of a device on its bound flow: keepalive time, OWN-1 uplink, back online if it was not. */
  const seen = (session: DeviceSession, now: number, kind: UplinkKind): void => {
    const deviceId = session.deviceId;
    devices.touchKeepalive(deviceId, now);
    if (events.hasListeners('uplink')) events.emit('uplink', { deviceId, at: now, kind });
    if (session.online) return;
    session.online = true;
    devices.markOnline([deviceId], now).then(
      (changed) => {
        for (const id of changed) {
          deps.log.info({ deviceId: id }, 'device online');
          events.emit('online', { deviceId: id, at: now, reason: 'keepalive' });
        }
      },
      (err: unknown) => {
        session.online = false; // try again with the next message
        deps.log.warn({ err, deviceId }, 'marking device online failed');
      },
    );
  };

  /** The registration of `deviceId` here, bound to `flow`; else 401 (UnboundRequest) or 404. */
  const sessionOf = async (deviceId: DeviceId, flow: Flow, edgeFlow: string | null, now: number): Promise<DeviceSession> => {
    const live = flows.get(deviceId);
    if (live !== undefined && live.expiresAt > now) {
      if (!sameDeviceFlow(live, flow, edgeFlow)) throw new UnboundRequest('other flow');
      return live;
    }
    if (live !== undefined) throw new DeviceOfflineError(deviceId); // expired: the scan forgets it
    // Through a SIP edge (issue 14): the edge placed this device here because its shard died or drains, so
    // the device must REGISTER here, and it has to learn that from this answer. 404, not 401: GB/T 28181
    // uses digest for REGISTER only (§9.1.2), and a SIP stack answered 401 retries the *same* MESSAGE with
    // credentials (RFC 3261 §8.1.3.5, §22.2; eXosip's automatic action does), so the device re-registers
    // only after its keepalive timeout count (§9.6.1: 3 × 60 s by default). 404 is what a device gets from
    // a platform that has no registration of it (WVP answers every MESSAGE so): no credential retry, the
    // keepalive fails at once, and devices re-register on it (the device simulator and the SIPp devices
    // do). No store read either: a drained shard's devices all arrive here within one keepalive interval.
    if (edgeFlow !== null) throw new DeviceOfflineError(deviceId);
    // Registered according to the store (another instance, or this one before a restart): this
    // instance has no verified binding, so the device must REGISTER here first. Otherwise 404.
    const stored = await devices.getDevice(deviceId);
    if (stored === null || !stored.online || stored.registeredAt === null || stored.expiresSec === null) throw new DeviceOfflineError(deviceId);
    if (stored.registeredAt + stored.expiresSec * 1000 <= now) throw new DeviceOfflineError(deviceId);
    throw new UnboundRequest('registered elsewhere or before a restart');
  };

  const updateCharset = (session: DeviceSession, charset: Charset, log: Logger): void => {
    if (session.charset === charset) return;
    session.charset = charset;
    log.info({ charset }, 'device charset detected');
    devices.provisionDevice({ deviceId: session.deviceId, charset }, clock.now()).catch((err: unknown) => log.warn({ err }, 'storing device charset failed'));
  };

  const full = async (req: SipRequest, ctx: Parameters<RequestHandler>[1]): Promise<void> => {
    let log = deps.log.child({ callId: req.headers.get('Call-ID') });
    let sender = '';
    try {
      const now = clock.now();
      const type = getContentType(req);
      if (type !== null && type.mediaType !== 'application/manscdp+xml') {
        ctx.reply(SipStatus.UnsupportedMediaType, { headers: { Accept: 'Application/MANSCDP+xml' } });
        return;
      }
      // SEC-1 before anything is charged or parsed: a message naming a device registered here from another
      // flow is refused at once, so it neither costs a parse nor drains the real device's rate bucket.
      const named = getFrom(req).uri.user;
      const bound = named === null ? undefined : flows.get(named);
      const edgeFlow = edgeFlowOf(req);
      if (bound !== undefined && !sameDeviceFlow(bound, ctx.flow, edgeFlow)) {
        sender = named ?? '';
        throw new UnboundRequest('other flow');
      }
      const limited = admission.charge(named, req.body.length, now, log);
      if (limited !== undefined) return refuse(ctx, limited);
      // Not from a live binding here: a store read and a challenge at the sender's choice of ids; bounded
      // per source address (a device's own bucket cannot hold invented ids).
      const source = edgeFlow !== null && edges(ctx.flow.remoteAddress) ? `edge:${edgeFlow}` : ctx.flow.remoteAddress;
      if (bound === undefined && !unbound.take(source, messageCost(req.body.length), now)) {
        unboundRefused++;
        if (now - unboundLoggedAt >= 10_000) {
          log.warn({ remote: ctx.flow.remoteAddress, refusedSinceLastLog: unboundRefused }, 'messages from unregistered senders over the per-address rate refused');
          unboundLoggedAt = now;
          unboundRefused = 0;
        }
        return refuse(ctx, new RateLimitedError(named ?? 'unknown'));
      }
      // The registration is checked before the body is decoded: a sender that is not registered here
      // (401/404) costs no decode, however large its body.
      let early: DeviceSession | undefined;
      if (named !== null && named !== '') {
        sender = named;
        log = log.child({ deviceId: named });
        early = await sessionOf(named, ctx.flow, edgeFlow, now);
      }
      const { msg, cmd } = await decode(req.body, named, log);
      const deviceId = named ?? msg.deviceId; // the sender; DeviceID may name a channel
      if (deviceId === '') throw new BadParameterError('From', 'no device id');
      if (early === undefined) {
        sender = deviceId;
        log = log.child({ deviceId });
      }
      const session = early ?? (await sessionOf(deviceId, ctx.flow, edgeFlow, now));
      const overCap = await admission.admit(session, cmd, now, log);
      if (overCap !== undefined) return refuse(ctx, overCap);
      seen(session, now, cmd.kind === 'Notify/Keepalive' ? 'keepalive' : 'message');
      updateCharset(session, domainCharset(msg.encoding.charset), log);
      ctx.reply(SipStatus.OK);
      if (cmd.kind === 'Notify/MediaStatus') {
        // §9.8: matched to its INVITE by Call-ID (src/media); the body carries no session reference
        events.emit('mediaStatus', { deviceId, at: now, callId: req.headers.get('Call-ID') ?? '', notifyType: cmd.body.notifyType });
      }
      await uplink.handle(session, cmd, log);
    } catch (err) {
      if (err instanceof UnboundRequest) {
        log.debug({ reason: err.reason, remote: `${ctx.flow.transport}:${ctx.flow.remoteAddress}:${ctx.flow.remotePort}` }, 'device message from an unbound flow refused');
        ctx.reply(SipStatus.Unauthorized, { headers: { 'WWW-Authenticate': challenge(sender, clock.now()) } });
        return;
      }
      const failure = toCatalogError(err);
      const { status, headers } = sipReplyFor(failure);
      if (status >= 500) log.error({ err }, 'device message handling failed');
      else log.debug({ code: failure.code, reason: failure.message, status }, 'device message refused');
      if (!ctx.finalSent) ctx.reply(status, { headers });
    }
  };

  /**
   * The hot path, answered statelessly (RFC 3261 §8.2.7: no transaction is kept for 64×T1, a
   * retransmitted keepalive is simply recorded again). Anything else, or a keepalive from a device not
   * registered here, goes on to the transaction-based handler.
   */
  const keepalive: MessageHandlers['keepalive'] = (req, flow) => {
    if (!isPlainManscdpType(req.contentType)) return undefined;
    // the device registered from this flow, when it is the only one there (a fleet's devices each have
    // their own): no lookup by the id sliced from the body, which costs several runtime string compares
    // in a Map of every device (udp-flow-index.ts); an edge's devices share its flow and go by id
    const onFlow = flows.soleOnFlow(flow);
    const shape = onFlow === undefined ? null : onFlow.keepaliveShape;
    let session: DeviceSession | undefined;
    let charset: ManscdpCharset;
    let reshape = false;
    if (onFlow !== undefined && shape !== null && shape !== false && shape.matches(req.text, req.bodyStart, onFlow.deviceId)) {
      // the device's last keepalive body with another SN: what scanKeepalive reads, with its DeviceID;
      // its From checked against the start of the last one that passed fromUserIs, else in full
      const prefix = onFlow.fromPrefix;
      if (prefix === false || prefix === null || !fromStartsWith(req.from, prefix)) {
        if (!fromUserIs(req.from, onFlow.deviceId)) return undefined;
        if (prefix !== false) onFlow.fromPrefix = fromPrefixOf(req.from, onFlow.deviceId) ?? false;
      }
      session = onFlow;
      charset = shape.charset;
    } else {
      const body = scanKeepalive(req.text, req.bodyStart);
      if (body === undefined || !fromUserIs(req.from, body.deviceId)) return undefined;
      const byFlow = onFlow !== undefined && onFlow.deviceId === body.deviceId;
      reshape = byFlow && shape !== false;
      // the From's start for the device's next keepalives, which its body's shape will check
      if (byFlow && onFlow.fromPrefix === null) onFlow.fromPrefix = fromPrefixOf(req.from, onFlow.deviceId) ?? false;
      session = byFlow ? onFlow : flows.get(body.deviceId);
      charset = body.charset;
    }
    const now = clock.now();
    if (session === undefined || session.expiresAt <= now) return undefined;
    if (!sameFlow(session.flow, flow)) return undefined; // SEC-1: the full path answers 401
    // behind an edge (SEC-1): the device flow the edge names in its Via must be the bound one, else the full path decides
    if (session.edgeFlow !== null && edgeFlowOfViaLine(req.topVia) !== session.edgeFlow) return undefined;
    // A charset change is stored by the full path (updateCharset); it happens once per device.
    if (session.charset !== domainCharset(charset)) return undefined;
    if (!admission.allow(session, req.text.length - req.bodyStart, now)) return undefined; // the full path answers 503
    // found by its flow and read by the scan: its next keepalives are checked against this body's shape;
    // a body of no shape keeps the one it had (a one-off), or marks a device that has none not to try again
    if (reshape) {
      const next = keepaliveShapeOf(req.text, req.bodyStart, session.deviceId);
      if (next !== undefined) session.keepaliveShape = next;
      else if (shape === null) session.keepaliveShape = false;
    }
    seen(session, now, 'keepalive');
    return SipStatus.OK;
  };

  const intake: DeviceIntake = {
    charge: (deviceId, bytes, now, log) => admission.charge(deviceId, bytes, now, log),
    decode: (body, deviceId, log) => decode(body, deviceId, log),
    admit: (session, cmd, now, log) => admission.admit(session, cmd, now, log),
  };
  return { keepalive, message: full, close: () => decoder.close(), intake };
}
