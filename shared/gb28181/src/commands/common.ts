/**
 * Pieces shared by the typed commands: the header every body carries (CmdType, SN, DeviceID —
 * GB/T 28181-2016 §A.2.1) and the `<Result>OK|ERROR</Result>` answer that closes control commands,
 * subscriptions and alarm notifications (§A.2.6).
 */
import { GbWrongCommandError } from '../errors.ts';
import { getText } from '../fields.ts';
import { buildManscdp, type BuildOptions, type ManscdpMessage, type ManscdpRoot } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';

export interface ManscdpHeader {
  sn: string;
  deviceId: string;
}

/** Result values of §A.2.6 (`resultType`). */
export const RESULT_OK = 'OK';
export const RESULT_ERROR = 'ERROR';

export function expectCommand(msg: ManscdpMessage, root: ManscdpRoot, cmdType: string): void {
  if (msg.root !== root || msg.cmdType !== cmdType) {
    throw new GbWrongCommandError(`${root}/${cmdType}`, `${msg.root}/${msg.cmdType}`);
  }
}

export function headerOf(msg: ManscdpMessage): ManscdpHeader {
  return { sn: msg.sn, deviceId: msg.deviceId };
}

export function buildCommand(
  root: ManscdpRoot,
  cmdType: string,
  header: ManscdpHeader,
  fields: ManscdpNode,
  opts?: BuildOptions,
): Buffer {
  return buildManscdp({ root, cmdType, sn: header.sn, deviceId: header.deviceId, fields }, opts);
}

/** A Query that carries nothing but the header (DeviceInfo, DeviceStatus, Catalog without range). */
export function decodeHeaderOnly(msg: ManscdpMessage, root: ManscdpRoot, cmdType: string): ManscdpHeader {
  expectCommand(msg, root, cmdType);
  return headerOf(msg);
}

export interface ResultResponse extends ManscdpHeader {
  /** `OK` or `ERROR` as sent (§A.2.6); absent when the device omitted it. */
  result?: string;
}

/** `<Response>` with just a Result, for any CmdType (DeviceControl, Alarm, Catalog subscription...). */
export function decodeResultResponse(msg: ManscdpMessage, cmdType: string): ResultResponse {
  expectCommand(msg, 'Response', cmdType);
  const result = getText(msg.fields, 'Result');
  return result === undefined ? headerOf(msg) : { ...headerOf(msg), result };
}

export function buildResultResponse(cmdType: string, response: ResultResponse, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = {};
  if (response.result !== undefined) fields['Result'] = response.result;
  return buildCommand('Response', cmdType, response, fields, opts);
}
