/**
 * MediaStatus Notify (GB/T 28181-2016 §9.8 / §9.9, §A.2.5): sent by the device inside a playback or
 * download session; NotifyType 121 means the file has been sent to its end, after which the platform
 * tears the session down with BYE.
 */
import { requireText } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

/** NotifyType 121: the history media file has been sent completely (§A.2.5). */
export const MEDIA_STATUS_END_OF_FILE = '121';

export interface MediaStatusNotify extends ManscdpHeader {
  notifyType: string;
}

export function decodeMediaStatusNotify(msg: ManscdpMessage): MediaStatusNotify {
  expectCommand(msg, 'Notify', 'MediaStatus');
  return { ...headerOf(msg), notifyType: requireText(msg.fields, 'NotifyType') };
}

export function buildMediaStatusNotify(notify: MediaStatusNotify, opts?: BuildOptions): Buffer {
  return buildCommand('Notify', 'MediaStatus', notify, { NotifyType: notify.notifyType }, opts);
}

export function isEndOfFile(notify: MediaStatusNotify): boolean {
  return notify.notifyType === MEDIA_STATUS_END_OF_FILE;
}
