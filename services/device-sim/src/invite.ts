// INVITE from the platform (GB/T 28181-2016 §9.2, §9.8, §9.9): answer the offer for one of our
// channels with an SDP of our own and start a MediaSession; ACK starts the RTP, INFO steers it,
// BYE (or any end of the dialog) stops it.
import { describeSdp, isGbError, parseSdp, type SdpSummary } from '@vms/gb28181';
import { SipStatus, type Dialog, type ServerContext, type SipLogger, type SipRequest } from '@vms/sip';
import type { SimChannel } from './channels.ts';
import { DeviceSimError } from './errors.ts';
import { openMediaSink, type MediaSink } from './media/sink.ts';
import type { ResolvedDeviceOptions } from './options.ts';
import { SDP_CONTENT_TYPE } from './protocol.ts';
import { buildAnswerSdp, planMedia, type MediaPlan } from './sdp-answer.ts';
import { MediaSession } from './session.ts';

/** ~2 Mbit/s, for the a=filesize of a download answer. */
const BYTES_PER_SECOND = 256 * 1024;

export interface InviteDeps {
  o: ResolvedDeviceOptions;
  channels: readonly SimChannel[];
  log: SipLogger;
  /** A y= SSRC for offers without a valid one (history = playback/download). */
  makeSsrc: (history: boolean) => string;
  /** Quirk: answer our own SSRC instead of the offered one (see planMedia). */
  answersOwnSsrc: () => boolean;
  onSession: (session: MediaSession, dialog: Dialog) => void;
}

export async function handleInvite(deps: InviteDeps, req: SipRequest, ctx: ServerContext): Promise<void> {
  const { o, log } = deps;
  const channel = channelFor(deps, req.uri.user);
  if (channel === undefined) {
    ctx.reply(SipStatus.NotFound);
    return;
  }
  let offer: SdpSummary;
  let plan: MediaPlan;
  try {
    offer = describeSdp(parseSdp(req.body));
    plan = planMedia(offer, () => deps.makeSsrc(offer.sessionName.toLowerCase() !== 'play'), deps.answersOwnSsrc());
  } catch (err) {
    if (!isGbError(err) && !(err instanceof DeviceSimError)) throw err;
    log.debug({ err }, 'device refused an INVITE offer');
    ctx.reply(SipStatus.NotAcceptableHere);
    return;
  }
  let sink: MediaSink;
  try {
    sink = await openMediaSink({ mode: plan.mode, localHost: o.localHost, remoteHost: plan.remoteHost, remotePort: plan.remotePort });
  } catch (err) {
    log.warn({ err }, 'device media socket not opened');
    ctx.reply(SipStatus.ServerInternalError);
    return;
  }
  if (ctx.signal.aborted) {
    sink.close(); // CANCELled (487 sent) or stack closing while we bound the socket
    return;
  }
  const answer = buildAnswerSdp(plan, {
    channelId: channel.id,
    address: o.localHost,
    port: sink.answerPort,
    fps: o.fps,
    fileSize: plan.rangeMs === undefined ? undefined : Math.round((plan.rangeMs / 1000) * BYTES_PER_SECOND),
  });
  const dialog = ctx.accept({ body: answer, contentType: SDP_CONTENT_TYPE });
  const session = new MediaSession({ callId: dialog.callId, channelId: channel.id, offer, plan, sink, o, log: log.child({ callId: dialog.callId }) });
  dialog.once('ack', () => void session.begin());
  dialog.on('info', (r, c) => session.handleInfo(r, c));
  dialog.once('terminated', (reason) => session.close(reason));
  session.once('closed', (reason) => {
    // The media path failed or the platform dropped the TCP connection: end the call too.
    if (reason === 'media-failed' || reason === 'media-closed') void dialog.destroy();
  });
  deps.onSession(session, dialog);
}

/** The Request-URI user names the channel; an IPC also answers for its device id. */
function channelFor(deps: InviteDeps, user: string | null): SimChannel | undefined {
  if (user === null) return undefined;
  const ch = deps.channels.find((c) => c.id === user);
  if (ch !== undefined) return ch;
  return user === deps.o.deviceId ? deps.channels[0] : undefined;
}
