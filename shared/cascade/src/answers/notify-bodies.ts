/**
 * NOTIFY bodies the cascade leader sends to a subscribed upstream (SPEC CASC-3; GB/T 28181-2016
 * §9.11, §A.2.5) from the by-value payload of a cascade event: a catalog change of one shared
 * channel, an alarm, a mobile position. The SN is the leader's own (the device's SN means nothing
 * upstream); the channel is placed as in the catalog answer, so the upstream's tree stays consistent.
 */
import {
  buildAlarmNotify,
  buildCatalogNotify,
  buildMobilePositionNotify,
  type AlarmNotify,
  type CatalogEvent,
  type CatalogItem,
  type MobilePositionNotify,
} from '@vms/gb28181';
import type { SharedChannel, UpstreamPlatform } from '../platform/platform.ts';
import { placeChannel } from './catalog-answer.ts';

/** Notify/Catalog with one item: our id as DeviceID, SumNum 1, the placed channel with its event. */
export function catalogNotifyBody(
  p: UpstreamPlatform,
  share: Pick<SharedChannel, 'catalogGroupId' | 'parentId'>,
  channel: CatalogItem,
  event: CatalogEvent,
  sn: number | string,
): Buffer {
  const item: CatalogItem = { ...placeChannel(p, share, channel), event };
  return buildCatalogNotify({ sn: String(sn), deviceId: p.localId, sumNum: 1, items: [item] }, { charset: p.charset });
}

/** Notify/Alarm as the device reported it (DeviceID = the alarm source), under the leader's SN. */
export function alarmNotifyBody(p: UpstreamPlatform, alarm: Omit<AlarmNotify, 'sn'>, sn: number | string): Buffer {
  return buildAlarmNotify({ ...alarm, sn: String(sn) }, { charset: p.charset });
}

/** Notify/MobilePosition as the device reported it, under the leader's SN. */
export function mobilePositionNotifyBody(p: UpstreamPlatform, position: Omit<MobilePositionNotify, 'sn'>, sn: number | string): Buffer {
  return buildMobilePositionNotify({ ...position, sn: String(sn) }, { charset: p.charset });
}
