/**
 * PresetQuery (GB/T 28181-2016 §A.2.4 query, §A.2.6 response): the presets a PTZ camera has,
 * as `<PresetList Num="n"><Item><PresetID/><PresetName/></Item>...`. Presets themselves are set,
 * called and deleted through PTZCmd (Annex A.3.4, ptz.ts).
 */
import { getItems, readFields, requireText, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import { buildCommand, decodeHeaderOnly, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export type PresetQuery = ManscdpHeader;

export interface Preset {
  presetId: string;
  presetName?: string;
}

export interface PresetQueryResponse extends ManscdpHeader {
  presets: Preset[];
}

export function decodePresetQuery(msg: ManscdpMessage): PresetQuery {
  return decodeHeaderOnly(msg, 'Query', 'PresetQuery');
}

export function buildPresetQuery(query: PresetQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'PresetQuery', query, {}, opts);
}

export function decodePresetQueryResponse(msg: ManscdpMessage): PresetQueryResponse {
  expectCommand(msg, 'Response', 'PresetQuery');
  const presets = getItems(msg.fields, 'PresetList').map(
    (item): Preset => ({
      ...readFields(item, [['presetName', 'PresetName']] as FieldSpec<Preset>),
      presetId: requireText(item, 'PresetID'),
    }),
  );
  return { ...headerOf(msg), presets };
}

export function buildPresetQueryResponse(response: PresetQueryResponse, opts?: BuildOptions): Buffer {
  const items = response.presets.map((p) => writeFields({ PresetID: p.presetId }, p, [['presetName', 'PresetName']]));
  const fields = { PresetList: { '@Num': String(items.length), Item: items } };
  return buildCommand('Response', 'PresetQuery', response, fields, opts);
}
