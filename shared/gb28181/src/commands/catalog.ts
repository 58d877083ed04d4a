/**
 * Catalog (GB/T 28181-2016 §9.5 / §A.2.4 query, §A.2.6 response; §9.11 / §A.2.5 subscription notify).
 * A device answers one query with one or more Response MESSAGEs, each repeating the total `SumNum`
 * and carrying a page of `<DeviceList Num="n">` items; the platform assembles them by SN.
 * A SUBSCRIBE's immediate answer is a Catalog Response with only `<Result>` (sample 13).
 */
import { getCount, getItems, getText, readFields, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { decodeCatalogItem, encodeCatalogItem, type CatalogItem } from './catalog-item.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export interface CatalogQuery extends ManscdpHeader {
  /** Optional change window of a catalog subscription (§A.2.4). */
  startTime?: string;
  endTime?: string;
}

export interface CatalogResponse extends ManscdpHeader {
  /** Total across all pages; equals `items.length` when the device left it out. */
  sumNum: number;
  items: CatalogItem[];
  /** Present on subscription acknowledgements (`<Result>OK</Result>`). */
  result?: string;
}

export interface CatalogNotify extends ManscdpHeader {
  sumNum: number;
  /** Each item carries its `event`. */
  items: CatalogItem[];
  status?: string;
}

const QUERY_FIELDS: FieldSpec<CatalogQuery> = [
  ['startTime', 'StartTime'],
  ['endTime', 'EndTime'],
];

export function decodeCatalogQuery(msg: ManscdpMessage): CatalogQuery {
  expectCommand(msg, 'Query', 'Catalog');
  return { ...headerOf(msg), ...readFields(msg.fields, QUERY_FIELDS) };
}

export function buildCatalogQuery(query: CatalogQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'Catalog', query, writeFields({}, query, QUERY_FIELDS), opts);
}

export function decodeCatalogResponse(msg: ManscdpMessage): CatalogResponse {
  expectCommand(msg, 'Response', 'Catalog');
  const items = getItems(msg.fields, 'DeviceList').map(decodeCatalogItem);
  const out: CatalogResponse = { ...headerOf(msg), sumNum: getCount(msg.fields, 'SumNum') ?? items.length, items };
  const result = getText(msg.fields, 'Result');
  if (result !== undefined) out.result = result;
  return out;
}

export function buildCatalogResponse(response: CatalogResponse, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = {};
  if (response.result !== undefined) fields['Result'] = response.result;
  Object.assign(fields, itemList(response.sumNum, response.items));
  return buildCommand('Response', 'Catalog', response, fields, opts);
}

export function decodeCatalogNotify(msg: ManscdpMessage): CatalogNotify {
  expectCommand(msg, 'Notify', 'Catalog');
  const items = getItems(msg.fields, 'DeviceList').map(decodeCatalogItem);
  const out: CatalogNotify = { ...headerOf(msg), sumNum: getCount(msg.fields, 'SumNum') ?? items.length, items };
  const status = getText(msg.fields, 'Status');
  if (status !== undefined) out.status = status;
  return out;
}

export function buildCatalogNotify(notify: CatalogNotify, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = {};
  if (notify.status !== undefined) fields['Status'] = notify.status;
  Object.assign(fields, itemList(notify.sumNum, notify.items));
  return buildCommand('Notify', 'Catalog', notify, fields, opts);
}

/** `<SumNum>` then `<DeviceList Num="page size">` (§A.2.6). */
function itemList(sumNum: number, items: readonly CatalogItem[]): ManscdpNode {
  return {
    SumNum: String(sumNum),
    DeviceList: { '@Num': String(items.length), Item: items.map(encodeCatalogItem) },
  };
}

/** Channel status as a boolean: ON per the standard, ONLINE / OK from some devices. */
export function isStatusOnline(status: string | undefined): boolean {
  const s = status?.trim().toUpperCase();
  return s === 'ON' || s === 'ONLINE' || s === 'OK';
}
