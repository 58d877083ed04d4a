// Requests from an upstream for one of our devices or channels (SPEC CASC-3): DeviceControl (PTZ,
// guard, record…) and device queries. Only the device's owner may send them on — the device accepts
// requests only from the address it registered to — so the instance that received the request sends
// it when it owns the device and otherwise publishes the raw SIP request by value; the owner, on
// receipt, sends its body to the device through the device's flow. A Query (DeviceInfo, Catalog,
// RecordInfo…) is relayed: the device's Responses go back to the upstream through the leader (§9.5).
import { RELAYED_QUERY_TYPES, type UpstreamPlatform } from '@vms/cascade';
import { decodeRawRequest, encodeRawRequest, type CascadeEventData, type UpstreamControlPayload, type UpstreamResponsePayload } from '@vms/cluster';
import { parseManscdp } from '@vms/gb28181';
import { parseSipMessage, serializeSipMessage, type SipRequest } from '@vms/sip';
import type { Logger } from 'pino';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceFlows } from '../sip/device-flows.ts';
import type { DeviceMessenger } from '../sip/device-messenger.ts';
import type { SipDeviceControl } from '../sip/sip-device-control.ts';

const RELAYED = new Set(RELAYED_QUERY_TYPES);

export interface UpstreamControlOptions {
  readonly flows: DeviceFlows;
  readonly messenger: DeviceMessenger;
  /** Queries to devices registered here, their Responses handed on. */
  readonly queries: Pick<SipDeviceControl, 'relayQuery'>;
  /** A device's Response for an upstream: sent by the leader (here, or published to it). */
  readonly answer: (payload: UpstreamResponsePayload) => void;
  readonly devices: DeviceRepository;
  /** 'local' when this instance owns the device (routeCascadeAction at the trigger), else publish. */
  readonly routeTrigger: (targetDeviceId: string) => 'local' | 'publish' | 'skip';
  /** Hands the action to the bus (never rejects, CASC-4). */
  readonly publish: (data: CascadeEventData) => void;
  readonly log: Logger;
}

export interface UpstreamControl {
  /** From the upstream MESSAGE router: a request for `targetId` (a device or a channel). */
  forDevice(p: UpstreamPlatform, targetId: string, req: SipRequest): Promise<void>;
  /** A control.upstream event this instance must execute (it owns the device). */
  execute(payload: UpstreamControlPayload): Promise<void>;
}

export function createUpstreamControl(o: UpstreamControlOptions): UpstreamControl {
  const log = o.log.child({ component: 'upstream-control' });

  const sendToDevice = async (platformId: string, deviceId: string, body: Buffer): Promise<void> => {
    const session = o.flows.get(deviceId);
    if (session === undefined) {
      log.info({ deviceId }, 'upstream control for a device not registered here: dropped');
      return;
    }
    const msg = parseManscdp(body);
    if (msg.root === 'Query' && RELAYED.has(msg.cmdType)) {
      const r = await o.queries.relayQuery(deviceId, body, RELAYED, (cmdType, response) =>
        o.answer({ platformId, deviceId, cmdType, response: response as UpstreamResponsePayload['response'] }),
      );
      log.info({ platformId, deviceId, targetId: msg.deviceId, cmdType: msg.cmdType, pages: r.pages, complete: r.complete }, 'upstream query relayed');
      return;
    }
    const res = await o.messenger.send(session, msg.deviceId, body, `upstream ${msg.cmdType}`);
    log.info({ deviceId, targetId: msg.deviceId, cmdType: msg.cmdType, status: res.status }, 'upstream control sent to device');
  };

  return {
    async forDevice(p, targetId, req) {
      // the device itself, or the device that reported this channel
      const deviceId = o.flows.get(targetId) !== undefined ? targetId : ((await o.devices.findChannelDevice(targetId)) ?? targetId);
      const route = o.routeTrigger(deviceId);
      if (route === 'local') return sendToDevice(p.serverId, deviceId, req.body);
      if (route === 'publish') {
        o.publish({
          kind: 'control.upstream',
          payload: { platformId: p.serverId, targetDeviceId: deviceId, request: encodeRawRequest(serializeSipMessage(req)) },
        });
      }
    },
    async execute(payload) {
      const msg = parseSipMessage(decodeRawRequest(payload));
      if (msg.type !== 'request') return;
      await sendToDevice(payload.platformId, payload.targetDeviceId, msg.body);
    },
  };
}
