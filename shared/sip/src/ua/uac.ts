import type { Dialog } from '../dialog/dialog.ts';
import { createInDialogRequest, createUacDialogState, type DialogKind, type DialogState } from '../dialog/dialog-state.ts';
import { getCSeq, getTo } from '../message/accessors.ts';
import type { SipRequest } from '../message/types.ts';
import { SipStatus } from '../status.ts';
import type { Flow, HostTarget, SendTarget } from '../transport/flow.ts';
import type { SipLogger } from '../transport/logger.ts';
import type { OutgoingRequest, SendOptions } from './client.ts';
import { SipRejectedError, SipStackError } from '../errors.ts';
import type { UacOptions, UacResult } from './types.ts';

export interface UacDeps {
  start(req: SipRequest, target: SendTarget, fallback: HostTarget | undefined, opts: SendOptions): OutgoingRequest;
  createDialog(state: DialogState, flow: Flow): Dialog;
  log: SipLogger;
}

/**
 * Dialog-creating request from our side (RFC 3261 §13.2 for INVITE, RFC 6665 §4.1 for SUBSCRIBE):
 * resolves with the dialog on 2xx — after sending the end-to-end ACK for INVITE (§13.2.2.4) —
 * and rejects with SipRejectedError on a non-2xx final, SIP_ERR_CANCELLED when `signal` aborted it.
 */
export async function runUac(
  deps: UacDeps,
  req: SipRequest,
  target: SendTarget,
  fallback: HostTarget | undefined,
  kind: DialogKind,
  opts: UacOptions,
): Promise<UacResult> {
  let dialog: Dialog | undefined;
  const out = deps.start(req, target, fallback, {
    auth: opts.auth,
    onProvisional: opts.onProvisional,
    // RFC 6026 Accepted state: a retransmitted 2xx means our ACK was lost — send it again.
    onLateResponse: (res) => {
      if (kind !== 'invite' || res.status < 200 || res.status >= 300 || dialog === undefined) return;
      const tag = getTo(res).params.get('tag') ?? '';
      if (tag === dialog.remoteTag) dialog.resendAck();
      else deps.log.debug({ callId: dialog.callId }, 'sip 2xx from another fork ignored');
    },
  });
  const onAbort = (): void => out.cancel();
  if (opts.signal?.aborted === true) out.cancel();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const { response, request, flow } = await out.done;
    if (response.status >= 300) {
      if (out.cancelled && response.status === SipStatus.RequestTerminated) {
        throw new SipStackError('SIP_ERR_CANCELLED', 'INVITE cancelled', { cause: { status: response.status } });
      }
      throw new SipRejectedError(response);
    }
    const state = createUacDialogState(request, response, kind);
    const d = deps.createDialog(state, flow);
    dialog = d;
    if (kind === 'invite') {
      const ack = createInDialogRequest(state, 'ACK', {}, getCSeq(request).seq);
      // §22.1 via §13.2.2.4: the 2xx ACK repeats the INVITE's credentials.
      for (const name of ['Authorization', 'Proxy-Authorization']) for (const v of request.headers.getLines(name)) ack.headers.append(name, v);
      d.setAck(ack);
      d.resendAck();
    }
    if (out.cancelled) {
      // The 2xx crossed our CANCEL (§9.1): the session exists; end it at once.
      void d.destroy();
      throw new SipStackError('SIP_ERR_CANCELLED', 'INVITE answered after cancel; BYE sent');
    }
    return { dialog: d, response };
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
