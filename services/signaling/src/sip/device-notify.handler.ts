// NOTIFY from devices (GB/T 28181-2016 §9.11, RFC 6665 §4.1.3): catalog changes, alarms and mobile
// positions under the subscriptions the platform holds (device-subscriptions.ts). Most arrive in our
// subscription dialog; some devices send them outside any dialog, so a stack-level handler takes those
// too, from a device registered here on the flow its REGISTER bound (SPEC SEC-1; others 403, unknown
// devices 404). Answered 200 once the body decoded, then: catalog items applied like a Catalog Notify
// MESSAGE (manscdp-uplink.ts), an alarm stored and published (no Response/Alarm MESSAGE: the 200 is
// the answer inside a subscription), a position stored and published. A NOTIFY without a body (the
// final `terminated` one) is answered 200 and changes nothing.
import { getContentType, getFrom, SipStatus, type RequestContext, type RequestHandler, type SipRequest } from '@vms/sip';
import type { DeviceId } from '../devices/device.types.ts';
import type { DeviceSession } from './device-flows.ts';
import { sameFlow } from './device-trust.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { ManscdpUplink } from './manscdp-uplink.ts';
import { domainCharset, type DeviceIntake } from './message.handler.ts';
import { sipReplyFor, toCatalogError } from './sip-status.ts';

export interface DeviceNotifyHandlers {
  /** A NOTIFY inside one of our subscription dialogs with `deviceId`. */
  inDialog(deviceId: DeviceId, req: SipRequest, ctx: RequestContext): void;
  /** For `stack.onRequest('NOTIFY', …)`: a NOTIFY no dialog of ours took. */
  readonly outOfDialog: RequestHandler;
}

export function createDeviceNotifyHandlers(deps: DeviceSideDeps, uplink: ManscdpUplink, intake: DeviceIntake): DeviceNotifyHandlers {
  const { flows, events, clock } = deps;

  const handle = async (session: DeviceSession, req: SipRequest, ctx: RequestContext): Promise<void> => {
    const log = deps.log.child({ deviceId: session.deviceId, callId: req.headers.get('Call-ID') });
    if (req.body.length === 0) {
      ctx.reply(SipStatus.OK);
      return;
    }
    const type = getContentType(req);
    if (type !== null && type.mediaType !== 'application/manscdp+xml') {
      ctx.reply(SipStatus.UnsupportedMediaType, { headers: { Accept: 'Application/MANSCDP+xml' } });
      return;
    }
    // SPEC SEC-3: the device's rate bucket, the large-body decode lane and the channel cap, as for MESSAGE
    const now = clock.now();
    let cmd;
    try {
      const limited = intake.charge(session.deviceId, req.body.length, now, log);
      if (limited !== undefined) throw limited;
      const decoded = await intake.decode(req.body, session.deviceId, log);
      cmd = decoded.cmd;
      const overCap = await intake.admit(session, cmd, now, log);
      if (overCap !== undefined) throw overCap;
      const charset = domainCharset(decoded.msg.encoding.charset);
      if (session.charset !== charset) session.charset = charset;
    } catch (err) {
      const failure = toCatalogError(err);
      const { status, headers } = sipReplyFor(failure);
      log.debug({ code: failure.code, reason: failure.message, status }, 'device NOTIFY refused');
      ctx.reply(status, { headers });
      return;
    }
    ctx.reply(SipStatus.OK);
    switch (cmd.kind) {
      case 'Notify/Alarm':
        events.emit('alarm', { deviceId: session.deviceId, at: now, alarm: cmd.body, via: 'notify' });
        log.info({ sn: cmd.body.sn, alarmMethod: cmd.body.alarmMethod, alarmPriority: cmd.body.alarmPriority }, 'alarm notified');
        return;
      case 'Notify/Catalog':
      case 'Notify/MobilePosition':
      case 'Response/Catalog':
        await uplink.handle(session, cmd, log);
        return;
      default:
        log.debug({ kind: cmd.kind }, 'device NOTIFY body not handled');
    }
  };

  /** Settles once answered and handled (a stack handler must not settle before its final response). */
  const run = (session: DeviceSession, req: SipRequest, ctx: RequestContext): Promise<void> =>
    handle(session, req, ctx).catch((err: unknown) => {
      deps.log.warn({ err, deviceId: session.deviceId }, 'device NOTIFY handling failed');
      if (!ctx.finalSent) ctx.reply(SipStatus.ServerInternalError);
    });

  return {
    inDialog(deviceId, req, ctx) {
      const session = flows.get(deviceId);
      // the subscription outlived the registration here (offline or moved): RFC 6665 §4.1.3 481 ends it at the device
      if (session === undefined) ctx.reply(SipStatus.CallTransactionDoesNotExist);
      else void run(session, req, ctx);
    },
    outOfDialog(req, ctx) {
      const deviceId = getFrom(req).uri.user ?? '';
      const session = flows.get(deviceId);
      if (session === undefined || session.expiresAt <= clock.now()) {
        ctx.reply(SipStatus.NotFound);
        return;
      }
      if (!sameFlow(session.flow, ctx.flow)) {
        ctx.reply(SipStatus.Forbidden);
        return;
      }
      return run(session, req, ctx);
    },
  };
}
