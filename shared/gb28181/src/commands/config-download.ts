/**
 * ConfigDownload (GB/T 28181-2016 §9.5; query §A.2.4, response §A.2.6): reading a device's
 * configuration. `ConfigType` names one or more sections separated by '/', e.g.
 * `BasicParam/VideoParamOpt`. BasicParam is typed; the other sections are returned as parsed.
 */
import { extraFields, getNode, readFields, requireText, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export interface ConfigDownloadQuery extends ManscdpHeader {
  configType: string;
}

/** §A.2.6 BasicParam: the device's SIP registration settings. */
export interface BasicParam {
  name?: string;
  deviceId?: string;
  sipServerId?: string;
  sipServerIp?: string;
  sipServerPort?: string;
  domainName?: string;
  expiration?: string;
  password?: string;
  heartBeatInterval?: string;
  heartBeatCount?: string;
}

export interface ConfigDownloadResponse extends ManscdpHeader {
  result?: string;
  basicParam?: BasicParam;
  /** Other sections (VideoParamOpt, SVACEncodeConfig...), as parsed. */
  extra?: ManscdpNode;
}

const BASIC_PARAM_FIELDS: FieldSpec<BasicParam> = [
  ['name', 'Name'],
  ['deviceId', 'DeviceID'],
  ['sipServerId', 'SIPServerID'],
  ['sipServerIp', 'SIPServerIP'],
  ['sipServerPort', 'SIPServerPort'],
  ['domainName', 'DomainName'],
  ['expiration', 'Expiration'],
  ['password', 'Password'],
  ['heartBeatInterval', 'HeartBeatInterval'],
  ['heartBeatCount', 'HeartBeatCount'],
];

export function decodeConfigDownloadQuery(msg: ManscdpMessage): ConfigDownloadQuery {
  expectCommand(msg, 'Query', 'ConfigDownload');
  return { ...headerOf(msg), configType: requireText(msg.fields, 'ConfigType') };
}

export function buildConfigDownloadQuery(query: ConfigDownloadQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'ConfigDownload', query, { ConfigType: query.configType }, opts);
}

export function decodeConfigDownloadResponse(msg: ManscdpMessage): ConfigDownloadResponse {
  expectCommand(msg, 'Response', 'ConfigDownload');
  const out: ConfigDownloadResponse = { ...headerOf(msg), ...readFields(msg.fields, [['result', 'Result']] as FieldSpec<ConfigDownloadResponse>) };
  const basic = getNode(msg.fields, 'BasicParam');
  if (basic !== undefined) out.basicParam = readFields(basic, BASIC_PARAM_FIELDS);
  const extra = extraFields(msg.fields, ['Result', 'BasicParam']);
  if (extra !== undefined) out.extra = extra;
  return out;
}

export function buildConfigDownloadResponse(response: ConfigDownloadResponse, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = {};
  if (response.result !== undefined) fields['Result'] = response.result;
  if (response.basicParam !== undefined) fields['BasicParam'] = writeFields({}, response.basicParam, BASIC_PARAM_FIELDS);
  return buildCommand('Response', 'ConfigDownload', response, Object.assign(fields, response.extra), opts);
}
