/**
 * Voice broadcast Notify (GB/T 28181-2016 §9.12, §A.2.5): the platform tells an audio output device
 * (TargetID) to pull audio from a source (SourceID). This body has no DeviceID; the generic parser
 * reports the TargetID as `deviceId`. The device answers Response/Broadcast with `<Result>`.
 */
import { requireText } from '../fields.ts';
import { buildManscdp, type BuildOptions, type ManscdpMessage } from '../manscdp.ts';
import { expectCommand } from './common.ts';

export interface BroadcastNotify {
  sn: string;
  sourceId: string;
  targetId: string;
}

export function decodeBroadcastNotify(msg: ManscdpMessage): BroadcastNotify {
  expectCommand(msg, 'Notify', 'Broadcast');
  return { sn: msg.sn, sourceId: requireText(msg.fields, 'SourceID'), targetId: requireText(msg.fields, 'TargetID') };
}

export function buildBroadcastNotify(notify: BroadcastNotify, opts?: BuildOptions): Buffer {
  const fields = { SourceID: notify.sourceId, TargetID: notify.targetId };
  return buildManscdp({ root: 'Notify', cmdType: 'Broadcast', sn: notify.sn, fields }, opts);
}
