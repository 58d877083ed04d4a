// MediaSignaling over @vms/sip (GB/T 28181-2016 §9.2 live, §9.8 playback, §9.9 download): the INVITE
// goes from the platform id to the channel, out of the flow the device registered on (NAT), with the
// Subject header and an SDP offer; the stack sends the ACK for the 2xx (RFC 3261 §13.2.2.4).
import { isIP } from 'node:net';
import { SipRejectedError, type Dialog, type SipStack } from '@vms/sip';
import type { Logger } from 'pino';
import type { SipSettings } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import { DeviceOfflineError, DeviceRejectedError, DeviceTimeoutError } from '../errors/catalog.ts';
import type { DeviceFlows } from '../sip/device-flows.ts';
import { deviceErrorFromSip } from '../sip/sip-status.ts';
import type { MediaDialog, MediaSignaling } from './media-signaling.port.ts';
import { dialogStateOf, saveDialog } from './saved-dialog.ts';

/** RFC 4566 media type, spelled as GB/T 28181 examples spell it. */
export const SDP_CONTENT_TYPE = 'APPLICATION/SDP';
export const MANSRTSP_CONTENT_TYPE = 'Application/MANSRTSP';

export interface SipMediaSignalingOptions {
  readonly stack: Pick<SipStack, 'createUAC' | 'restoreDialog'>;
  readonly flows: Pick<DeviceFlows, 'get'>;
  readonly sip: SipSettings;
  readonly clock: Clock;
  /** Deadline for the device's final answer to INVITE; the INVITE is CANCELled after it. */
  readonly inviteTimeoutMs: number;
  /**
   * Deadline for the device's final answer to an in-dialog INFO (MANSRTSP). Below Timer F (32 s) and below the
   * forward read timeout of `playback.control`, so the caller hears 4606 from the owner, not 4604 from a forward.
   */
  readonly infoTimeoutMs: number;
  /** Where a snapshot that does not parse back is reported. */
  readonly log?: Logger;
}

const hostPart = (address: string): string => (isIP(address) === 6 ? `[${address}]` : address);

export function createSipMediaSignaling(o: SipMediaSignalingOptions): MediaSignaling {
  const from = `<sip:${o.sip.serverId}@${o.sip.realm}>`;
  return {
    async invite(req) {
      const session = o.flows.get(req.deviceId);
      if (session === undefined) throw new DeviceOfflineError(req.deviceId);
      const { flow } = session;
      const abort = new AbortController();
      let timedOut = false;
      const timer = o.clock.setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, o.inviteTimeoutMs);
      let dialog: Dialog;
      try {
        const r = await o.stack.createUAC(
          {
            uri: `sip:${req.channelId}@${hostPart(flow.remoteAddress)}:${flow.remotePort}${flow.transport === 'tcp' ? ';transport=tcp' : ''}`,
            // Issue 14: behind a SIP edge, the Path it recorded is the route (RFC 3327 §5); the edge
            // record-routes the dialog, so ACK, INFO and BYE follow the route set (RFC 3261 §12.1.2)
            headers:
              session.path === null
                ? { From: from, To: `<sip:${req.channelId}@${o.sip.realm}>`, Subject: req.subject }
                : { From: from, To: `<sip:${req.channelId}@${o.sip.realm}>`, Subject: req.subject, Route: session.path },
            body: req.sdp,
            contentType: SDP_CONTENT_TYPE,
            target: flow,
          },
          { signal: abort.signal },
        );
        dialog = r.dialog;
        const answer = r.response.body;
        return wrapDialog(dialog, answer, { deviceId: req.deviceId, clock: o.clock, infoTimeoutMs: o.infoTimeoutMs });
      } catch (err) {
        if (timedOut) throw new DeviceTimeoutError(req.deviceId, 'INVITE', 'request');
        if (err instanceof SipRejectedError) throw new DeviceRejectedError(req.deviceId, 'INVITE', `${err.response.status} ${err.response.reason}`);
        throw deviceErrorFromSip(err, req.deviceId, 'INVITE');
      } finally {
        o.clock.clearTimeout(timer);
      }
    },
    restore(deviceId, saved) {
      const session = o.flows.get(deviceId);
      if (session === undefined) return null;
      let dialog: Dialog;
      try {
        dialog = o.stack.restoreDialog(dialogStateOf(saved), session.flow);
      } catch (err) {
        o.log?.warn({ err, deviceId, callId: saved.callId }, 'saved dialog not restorable');
        return null;
      }
      return wrapDialog(dialog, Buffer.alloc(0), { deviceId, clock: o.clock, infoTimeoutMs: o.infoTimeoutMs });
    },
  };
}

interface InfoDeadline {
  readonly deviceId: string;
  readonly clock: Clock;
  readonly infoTimeoutMs: number;
}

function wrapDialog(dialog: Dialog, answer: Buffer, deadline: InfoDeadline): MediaDialog {
  let byeSent: Promise<void> | null = null;
  const listeners: ((reason: string) => void)[] = [];
  dialog.once('terminated', (reason) => {
    if (reason === 'local' || reason === 'closed') return; // our BYE / shutdown: we know already
    for (const l of listeners) l(reason);
  });
  return {
    callId: dialog.callId,
    answer,
    info(body) {
      const sent = dialog.request('INFO', { body, contentType: MANSRTSP_CONTENT_TYPE });
      return new Promise<number>((resolve, reject) => {
        // The transaction runs on to Timer F; its late outcome is dropped (the caller ends the session).
        const timer = deadline.clock.setTimeout(
          () => reject(new DeviceTimeoutError(deadline.deviceId, 'INFO', 'request')),
          deadline.infoTimeoutMs,
        );
        sent.then(
          (res) => {
            deadline.clock.clearTimeout(timer);
            resolve(res.status);
          },
          (err: unknown) => {
            deadline.clock.clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      });
    },
    bye() {
      byeSent ??= dialog.destroy();
      return byeSent;
    },
    onEnded(listener) {
      listeners.push(listener);
    },
    saved: () => saveDialog(dialog),
    // no BYE: the new owner ends this dialog from its snapshot; 'closed' reaches no onEnded listener
    drop: () => dialog.closeSilently(),
  };
}
