/**
 * Keepalive Notify (GB/T 28181-2016 §9.6 status reporting, §A.2.5): the device's heartbeat, sent as a MESSAGE every
 * keepalive interval. `Info` optionally lists the ids of sub-devices that are in fault.
 */
import { getNode, getText, getTexts } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export interface Keepalive extends ManscdpHeader {
  /** `OK` or `ERROR`; some devices omit it, the heartbeat still counts. */
  status?: string;
  /** `Info/DeviceID` entries: sub-devices reported in fault. */
  faultDeviceIds?: string[];
}

export function decodeKeepalive(msg: ManscdpMessage): Keepalive {
  expectCommand(msg, 'Notify', 'Keepalive');
  const out: Keepalive = headerOf(msg);
  const status = getText(msg.fields, 'Status');
  if (status !== undefined) out.status = status;
  const info = getNode(msg.fields, 'Info');
  const faults = info === undefined ? [] : getTexts(info, 'DeviceID');
  if (faults.length > 0) out.faultDeviceIds = faults;
  return out;
}

export function buildKeepalive(keepalive: Keepalive, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = { Status: keepalive.status ?? 'OK' };
  if (keepalive.faultDeviceIds !== undefined && keepalive.faultDeviceIds.length > 0) {
    fields['Info'] = { DeviceID: [...keepalive.faultDeviceIds] };
  }
  return buildCommand('Notify', 'Keepalive', keepalive, fields, opts);
}
