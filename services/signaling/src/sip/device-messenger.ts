// Sends MANSCDP MESSAGEs to a registered device (GB/T 28181-2016 §9.3, §9.5, §9.7): from the
// platform id, to the device or channel id, out of the flow the device's last request came on (the
// same socket and source port it registered to, so NAT bindings and device firewalls let it in).
// Every failure comes back as a catalog error (sip-status.ts).
import { isIP } from 'node:net';
import type { SipResponse, SipStack } from '@vms/sip';
import type { SipSettings } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import { DeviceTimeoutError } from '../errors/catalog.ts';
import type { DeviceSession } from './device-flows.ts';
import { MANSCDP_CONTENT_TYPE } from './device-side.types.ts';
import { deviceErrorFromSip, deviceErrorFromStatus } from './sip-status.ts';

export interface DeviceMessenger {
  /**
   * MESSAGE with `body` to `targetId` (the device, or one of its channels) through the device's flow.
   * Resolves with the 2xx; rejects with DeviceTimeoutError (no final response), DeviceOfflineError
   * (unreachable), DeviceRejectedError (non-2xx) or ShuttingDownError.
   */
  send(session: DeviceSession, targetId: string, body: Buffer, operation: string): Promise<SipResponse>;
}

const hostPart = (address: string): string => (isIP(address) === 6 ? `[${address}]` : address);

export interface DeviceMessengerOptions {
  readonly stack: Pick<SipStack, 'request'>;
  readonly sip: SipSettings;
  readonly clock: Clock;
  /** Deadline for the SIP final response (query-timeouts.ts `requestMs`). */
  readonly requestMs: number;
}

export function createDeviceMessenger(o: DeviceMessengerOptions): DeviceMessenger {
  const { stack, sip, clock } = o;
  const from = `<sip:${sip.serverId}@${sip.realm}>`;

  const exchange = async (session: DeviceSession, targetId: string, body: Buffer, operation: string): Promise<SipResponse> => {
    const { flow, deviceId } = session;
    let res: SipResponse;
    try {
      res = await stack.request({
        method: 'MESSAGE',
        uri: `sip:${targetId}@${hostPart(flow.remoteAddress)}:${flow.remotePort}${flow.transport === 'tcp' ? ';transport=tcp' : ''}`,
        // Issue 14: behind a SIP edge the Path it recorded is the route (RFC 3327 §5), the edge's flow the target.
        headers: session.path === null ? { From: from, To: `<sip:${targetId}@${sip.realm}>` } : { From: from, To: `<sip:${targetId}@${sip.realm}>`, Route: session.path },
        body,
        contentType: MANSCDP_CONTENT_TYPE,
        target: flow,
      });
    } catch (err) {
      throw deviceErrorFromSip(err, deviceId, operation);
    }
    if (res.status < 200 || res.status >= 300) throw deviceErrorFromStatus(res.status, res.reason, deviceId, operation);
    return res;
  };

  return {
    send(session, targetId, body, operation) {
      const sent = exchange(session, targetId, body, operation);
      return new Promise<SipResponse>((resolve, reject) => {
        // The transaction itself runs on to Timer F; its late outcome is dropped.
        const timer = clock.setTimeout(() => reject(new DeviceTimeoutError(session.deviceId, operation, 'request')), o.requestMs);
        sent.then(
          (res) => {
            clock.clearTimeout(timer);
            resolve(res);
          },
          (err: unknown) => {
            clock.clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      });
    },
  };
}
