/**
 * RecordInfo: history video search (GB/T 28181-2016 §9.7; query §A.2.4,
 * response §A.2.6). Answers are paged like Catalog (`SumNum` total, `RecordList Num` per page) and
 * matched to the query by SN only: the Response's DeviceID may be the parent device rather than the
 * queried channel, and items may name other channels (sample 10).
 */
import { extraFields, getCount, getItems, readFields, requireText, specTags, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

/** Record types of the query (§A.2.4): time, alarm, manual, all. */
export const RECORD_TYPES = ['time', 'alarm', 'manual', 'all'] as const;

export interface RecordInfoQuery extends ManscdpHeader {
  /** `yyyy-MM-ddTHH:mm:ss` local time (see time.ts). */
  startTime: string;
  endTime: string;
  filePath?: string;
  address?: string;
  secrecy?: string;
  type?: string;
  recorderId?: string;
  indistinctQuery?: string;
  streamNumber?: string;
  alarmMethod?: string;
  alarmType?: string;
}

export interface RecordItem {
  deviceId: string;
  name?: string;
  filePath?: string;
  address?: string;
  startTime?: string;
  endTime?: string;
  secrecy?: string;
  type?: string;
  recorderId?: string;
  fileSize?: string;
  recordLocation?: string;
  streamNumber?: string;
  extra?: ManscdpNode;
}

export interface RecordInfoResponse extends ManscdpHeader {
  name?: string;
  /** Total across pages; `items.length` when the device left it out. */
  sumNum: number;
  items: RecordItem[];
}

const QUERY_FIELDS: FieldSpec<RecordInfoQuery> = [
  ['startTime', 'StartTime'],
  ['endTime', 'EndTime'],
  ['filePath', 'FilePath'],
  ['address', 'Address'],
  ['secrecy', 'Secrecy'],
  ['type', 'Type'],
  ['recorderId', 'RecorderID'],
  ['indistinctQuery', 'IndistinctQuery'],
  ['streamNumber', 'StreamNumber'],
  ['alarmMethod', 'AlarmMethod'],
  ['alarmType', 'AlarmType'],
];

const ITEM_FIELDS: FieldSpec<RecordItem> = [
  ['deviceId', 'DeviceID'],
  ['name', 'Name'],
  ['filePath', 'FilePath'],
  ['address', 'Address'],
  ['startTime', 'StartTime'],
  ['endTime', 'EndTime'],
  ['secrecy', 'Secrecy'],
  ['type', 'Type'],
  ['recorderId', 'RecorderID'],
  ['fileSize', 'FileSize'],
  ['recordLocation', 'RecordLocation'],
  ['streamNumber', 'StreamNumber'],
];

export function decodeRecordInfoQuery(msg: ManscdpMessage): RecordInfoQuery {
  expectCommand(msg, 'Query', 'RecordInfo');
  return {
    ...readFields(msg.fields, QUERY_FIELDS),
    ...headerOf(msg),
    startTime: requireText(msg.fields, 'StartTime'),
    endTime: requireText(msg.fields, 'EndTime'),
  };
}

export function buildRecordInfoQuery(query: RecordInfoQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'RecordInfo', query, writeFields({}, query, QUERY_FIELDS), opts);
}

export function decodeRecordInfoResponse(msg: ManscdpMessage): RecordInfoResponse {
  expectCommand(msg, 'Response', 'RecordInfo');
  const items = getItems(msg.fields, 'RecordList').map(decodeRecordItem);
  const out: RecordInfoResponse = { ...headerOf(msg), sumNum: getCount(msg.fields, 'SumNum') ?? items.length, items };
  const name = readFields(msg.fields, [['name', 'Name']] as FieldSpec<RecordInfoResponse>).name;
  if (name !== undefined) out.name = name;
  return out;
}

export function buildRecordInfoResponse(response: RecordInfoResponse, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = {};
  if (response.name !== undefined) fields['Name'] = response.name;
  fields['SumNum'] = String(response.sumNum);
  fields['RecordList'] = {
    '@Num': String(response.items.length),
    Item: response.items.map((item) => Object.assign(writeFields({}, item, ITEM_FIELDS), item.extra)),
  };
  return buildCommand('Response', 'RecordInfo', response, fields, opts);
}

function decodeRecordItem(node: ManscdpNode): RecordItem {
  const item: RecordItem = { ...readFields(node, ITEM_FIELDS), deviceId: requireText(node, 'DeviceID') };
  const extra = extraFields(node, specTags(ITEM_FIELDS));
  if (extra !== undefined) item.extra = extra;
  return item;
}
