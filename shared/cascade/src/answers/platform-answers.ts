/**
 * Answers to an upstream's queries about this platform itself (SPEC CASC-2; GB/T 28181-2016 §9.5):
 * DeviceInfo and DeviceStatus whose DeviceID is our id, as captured upper platforms send right after
 * registration (sample 16). And the router that tells those apart from requests for one of our
 * devices, which the device's owner must execute (CASC-3). Pure.
 */
import {
  buildDeviceInfoResponse,
  buildDeviceStatusResponse,
  formatGbTime,
  RESULT_OK,
  type ManscdpHeader,
  type ManscdpMessage,
} from '@vms/gb28181';
import type { UpstreamPlatform } from '../platform/platform.ts';

/** China Standard Time: GB/T 28181 times are local times without zone. */
export const DEFAULT_UTC_OFFSET_MINUTES = 480;

export interface PlatformIdentity {
  readonly deviceName: string;
  readonly manufacturer: string;
  readonly model: string;
  readonly firmware: string;
}

/** Response/DeviceInfo about the platform; `channelCount` = channels shared with this upstream. */
export function platformDeviceInfoAnswer(p: UpstreamPlatform, query: ManscdpHeader, identity: PlatformIdentity, channelCount: number): Buffer {
  return buildDeviceInfoResponse(
    { sn: query.sn, deviceId: query.deviceId, result: RESULT_OK, ...identity, channel: String(channelCount) },
    { charset: p.charset },
  );
}

/** Response/DeviceStatus about the platform: online, working, with its clock. */
export function platformDeviceStatusAnswer(
  p: UpstreamPlatform,
  query: ManscdpHeader,
  now: Date,
  utcOffsetMinutes: number = DEFAULT_UTC_OFFSET_MINUTES,
): Buffer {
  return buildDeviceStatusResponse(
    { sn: query.sn, deviceId: query.deviceId, result: RESULT_OK, online: 'ONLINE', status: 'OK', deviceTime: formatGbTime(now, utcOffsetMinutes) },
    { charset: p.charset },
  );
}

export type UpstreamMessageRoute =
  /** Answer here (the leader) from the platform's shared channels. */
  | { readonly kind: 'catalog-query'; readonly query: ManscdpHeader }
  | { readonly kind: 'device-info-query'; readonly query: ManscdpHeader }
  | { readonly kind: 'device-status-query'; readonly query: ManscdpHeader }
  /** For one of our devices or channels: its owner sends it on (publish control.upstream when not self). */
  | { readonly kind: 'for-device'; readonly targetDeviceId: string }
  /** About the platform itself but nothing we answer: reply 200 and ignore. */
  | { readonly kind: 'unsupported' };

/** Routes a MANSCDP MESSAGE body from an upstream platform. */
export function routeUpstreamMessage(p: UpstreamPlatform, msg: ManscdpMessage): UpstreamMessageRoute {
  const query = { sn: msg.sn, deviceId: msg.deviceId };
  const aboutUs = msg.deviceId === p.localId || (p.catalog.groupId !== null && msg.deviceId === p.catalog.groupId);
  if (!aboutUs) return { kind: 'for-device', targetDeviceId: msg.deviceId };
  if (msg.root !== 'Query') return { kind: 'unsupported' };
  switch (msg.cmdType) {
    case 'Catalog':
      return { kind: 'catalog-query', query };
    case 'DeviceInfo':
      return { kind: 'device-info-query', query };
    case 'DeviceStatus':
      return { kind: 'device-status-query', query };
    default:
      return { kind: 'unsupported' };
  }
}
