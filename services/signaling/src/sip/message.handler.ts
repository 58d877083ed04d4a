// MESSAGE from devices (GB/T 28181-2016 §9.3-§9.7, MANSCDP bodies).
//
// Keepalive is the hot path (one per device per minute, fleet-wide): a byte search recognises it
// without parsing the XML, the registration is found in memory, the keepalive time is recorded
// synchronously (the MySQL store batches it, OWN-5) and 200 goes out statelessly (RFC 3261 §8.2.7,
// nothing kept per keepalive); the only store call is markOnline, not awaited, when the device had
// been marked offline.
//
// Everything else is parsed, answered 200, then handed to manscdp-uplink.ts. A request from a device
// not registered here is answered 404 (WVP's practice; devices re-REGISTER after failed keepalives).
// After a restart with a MySQL store, a device the store has online with a registration still within
// its lifetime is taken back from the store instead, so a restart does not make every device re-register.
import { decodeManscdpCommand, parseManscdp, type ManscdpCharset } from '@vms/gb28181';
import { getContentType, getFrom, SipStatus, type Flow, type RequestHandler, type SipRequest, type StatelessHandler } from '@vms/sip';
import type { Logger } from 'pino';
import type { Charset, DeviceId } from '../devices/device.types.ts';
import { BadParameterError, DeviceOfflineError } from '../errors/catalog.ts';
import type { UplinkKind } from '../events/device-events.ts';
import type { DeviceSession } from './device-flows.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { ManscdpUplink } from './manscdp-uplink.ts';
import { sipReplyFor, toCatalogError } from './sip-status.ts';

/** Largest body the keepalive pre-check looks at; real keepalives are ~150-250 bytes (samples 03, 04). */
const KEEPALIVE_MAX_BYTES = 1024;
const KEEPALIVE_CMD = Buffer.from('<CmdType>Keepalive</CmdType>', 'latin1');
const NOTIFY_OPEN = Buffer.from('<Notify>', 'latin1');
const DEVICE_ID_OPEN = Buffer.from('<DeviceID>', 'latin1');
const DEVICE_ID_CLOSE = Buffer.from('</DeviceID>', 'latin1');
const MAX_ID_LENGTH = 32;

/**
 * Cheap pre-check: the DeviceID of a `<Notify>` whose CmdType is exactly `Keepalive`, or null. Any
 * other spelling (`keepalive`, whitespace inside the element, a huge body) returns null and takes the
 * full parser, which accepts it too: this is only a shortcut, never a different interpretation.
 */
export function keepaliveDeviceId(body: Buffer): string | null {
  if (body.length > KEEPALIVE_MAX_BYTES) return null;
  if (body.indexOf(KEEPALIVE_CMD) < 0 || body.indexOf(NOTIFY_OPEN) < 0) return null;
  const open = body.indexOf(DEVICE_ID_OPEN);
  if (open < 0) return null;
  const start = open + DEVICE_ID_OPEN.length;
  const end = body.indexOf(DEVICE_ID_CLOSE, start);
  if (end < 0 || end - start > MAX_ID_LENGTH) return null;
  const id = body.toString('latin1', start, end);
  return id === '' || id.trim() !== id ? null : id;
}

export const domainCharset = (c: ManscdpCharset): Charset => (c === 'UTF-8' ? 'UTF-8' : 'GB2312');

export interface MessageHandlers {
  /** For `stack.onStatelessRequest('MESSAGE', …)`. */
  readonly keepalive: StatelessHandler;
  /** For `stack.onRequest('MESSAGE', …)`. */
  readonly message: RequestHandler;
}

export function createMessageHandlers(deps: DeviceSideDeps, uplink: ManscdpUplink): MessageHandlers {
  const { devices, flows, events, clock } = deps;

  /** Liveness of a registered device: flow, keepalive time, OWN-1 uplink, back online if it was not. */
  const seen = (session: DeviceSession, flow: Flow, now: number, kind: UplinkKind): void => {
    const deviceId = session.deviceId;
    session.flow = flow; // NAT rebinding: requests go where the device last spoke from
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

  /** The registration of `deviceId` here, or one still valid in the store (restart), else 404. */
  const sessionOf = async (deviceId: DeviceId, flow: Flow, now: number, log: Logger): Promise<DeviceSession> => {
    const live = flows.get(deviceId);
    if (live !== undefined && live.expiresAt > now) return live;
    if (live !== undefined) throw new DeviceOfflineError(deviceId); // expired: the scan forgets it
    // Only a device the store still has online: an unregistered or timed-out one must REGISTER again.
    const stored = await devices.getDevice(deviceId);
    if (stored === null || !stored.online || stored.registeredAt === null || stored.expiresSec === null) throw new DeviceOfflineError(deviceId);
    const expiresAt = stored.registeredAt + stored.expiresSec * 1000;
    if (expiresAt <= now) throw new DeviceOfflineError(deviceId);
    const session = flows.register({ deviceId, flow, charset: stored.charset, registeredAt: stored.registeredAt, expiresAt });
    log.info({ expiresAt: new Date(expiresAt).toISOString() }, 'device registration taken over from the store');
    return session;
  };

  const updateCharset = (session: DeviceSession, charset: Charset, log: Logger): void => {
    if (session.charset === charset) return;
    session.charset = charset;
    log.info({ charset }, 'device charset detected');
    devices.provisionDevice({ deviceId: session.deviceId, charset }, clock.now()).catch((err: unknown) => log.warn({ err }, 'storing device charset failed'));
  };

  const full = async (req: SipRequest, ctx: Parameters<RequestHandler>[1]): Promise<void> => {
    let log = deps.log.child({ callId: req.headers.get('Call-ID') });
    try {
      const now = clock.now();
      const type = getContentType(req);
      if (type !== null && type.mediaType !== 'application/manscdp+xml') {
        ctx.reply(SipStatus.UnsupportedMediaType, { headers: { Accept: 'Application/MANSCDP+xml' } });
        return;
      }
      const msg = parseManscdp(req.body);
      const cmd = decodeManscdpCommand(msg);
      const deviceId = getFrom(req).uri.user ?? msg.deviceId; // the sender; DeviceID may name a channel
      if (deviceId === '') throw new BadParameterError('From', 'no device id');
      log = log.child({ deviceId });
      const session = await sessionOf(deviceId, ctx.flow, now, log);
      seen(session, ctx.flow, now, cmd.kind === 'Notify/Keepalive' ? 'keepalive' : 'message');
      updateCharset(session, domainCharset(msg.encoding.charset), log);
      ctx.reply(SipStatus.OK);
      if (cmd.kind === 'Notify/MediaStatus') {
        // §9.8: matched to its INVITE by Call-ID (src/media); the body carries no session reference
        events.emit('mediaStatus', { deviceId, at: now, callId: req.headers.get('Call-ID') ?? '', notifyType: cmd.body.notifyType });
      }
      await uplink.handle(session, cmd, log);
    } catch (err) {
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
  const keepalive: StatelessHandler = (req, flow) => {
    const id = keepaliveDeviceId(req.body);
    if (id === null) return undefined;
    const session = flows.get(id);
    const now = clock.now();
    if (session === undefined || session.expiresAt <= now) return undefined;
    seen(session, flow, now, 'keepalive');
    return SipStatus.OK;
  };

  return { keepalive, message: full };
}
