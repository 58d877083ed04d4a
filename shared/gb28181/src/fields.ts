/**
 * Reading and writing MANSCDP element trees for the typed commands. Lookups are exact first, then
 * case-insensitive: real bodies spell `<info>` (lunasaw template, sample 15) and the 2016 text itself
 * spells `<Alarmstatus>`. Values stay strings; the few counters (SumNum, Num) are parsed strictly.
 */
import { GbInvalidFieldError, GbMissingFieldError } from './errors.ts';
import { ATTRIBUTE_PREFIX, TEXT_KEY, type ManscdpNode, type ManscdpValue } from './xml.ts';

/** Table of `[property, XML tag]` pairs, in the element order of the standard's schema. */
export type FieldSpec<T> = ReadonlyArray<readonly [keyof T & string, string]>;

export function findKey(node: ManscdpNode, tag: string): string | undefined {
  if (Object.hasOwn(node, tag)) return tag;
  const lower = tag.toLowerCase();
  for (const key of Object.keys(node)) if (key.toLowerCase() === lower) return key;
  return undefined;
}

export function getValue(node: ManscdpNode, tag: string): ManscdpValue | undefined {
  const key = findKey(node, tag);
  return key === undefined ? undefined : node[key];
}

/** Text of a leaf element. A repeated element yields its first occurrence. */
export function getText(node: ManscdpNode, tag: string): string | undefined {
  return textOf(getValue(node, tag), tag);
}

export function textOf(value: ManscdpValue | undefined, tag: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  if (Array.isArray(value)) return textOf(value[0], tag);
  const text = value[TEXT_KEY];
  if (typeof text === 'string' && Object.keys(value).every((k) => k === TEXT_KEY || k.startsWith(ATTRIBUTE_PREFIX))) {
    return text;
  }
  if (Object.keys(value).every((k) => k.startsWith(ATTRIBUTE_PREFIX))) return '';
  throw new GbInvalidFieldError(tag, 'element has children where text is expected');
}

export function requireText(node: ManscdpNode, tag: string): string {
  const text = getText(node, tag);
  if (text === undefined || text === '') throw new GbMissingFieldError(tag);
  return text;
}

/** Every occurrence of a repeated leaf element (e.g. the DeviceIDs of a Keepalive's Info). */
export function getTexts(node: ManscdpNode, tag: string): string[] {
  const value = getValue(node, tag);
  if (value === undefined) return [];
  const all = Array.isArray(value) ? value : [value];
  return all.map((v) => textOf(v, tag) ?? '').filter((t) => t !== '');
}

/** A container element; `<Info/>` (empty) reads as an empty node, a repeated one as its first. */
export function getNode(node: ManscdpNode, tag: string): ManscdpNode | undefined {
  return nodeOf(getValue(node, tag), tag);
}

function nodeOf(value: ManscdpValue | undefined, tag: string): ManscdpNode | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return nodeOf(value[0], tag);
  if (typeof value === 'string') {
    if (value === '') return {};
    throw new GbInvalidFieldError(tag, 'text where an element list is expected');
  }
  return value;
}

/** Non-negative integer field (SumNum, Num...), strictly decimal. */
export function getCount(node: ManscdpNode, tag: string): number | undefined {
  const text = getText(node, tag);
  return text === undefined || text === '' ? undefined : parseCount(text, tag);
}

export function parseCount(text: string, field: string): number {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (Number.isNaN(n)) throw new GbInvalidFieldError(field, 'not a non-negative integer');
  return n;
}

/**
 * The `<Item>` (or `itemTag`) children of a list element (`DeviceList`, `RecordList`,
 * `CruiseTrackList`/`CruiseTrack`...). The XML layer already makes list members arrays; an empty
 * member is skipped, a text-only one is refused.
 */
export function getItems(node: ManscdpNode, listTag: string, itemTag = 'Item'): ManscdpNode[] {
  const list = getNode(node, listTag);
  if (list === undefined) return [];
  const items = getValue(list, itemTag);
  if (items === undefined) return [];
  const all = Array.isArray(items) ? items : [items];
  const out: ManscdpNode[] = [];
  for (const item of all) {
    if (item === '') continue;
    if (typeof item === 'string' || Array.isArray(item)) throw new GbInvalidFieldError(`${listTag}.${itemTag}`, 'item is not an element list');
    out.push(item);
  }
  return out;
}

/** The string fields of `spec` present in `node`; absent ones are left out (no `undefined` keys). */
export function readFields<T>(node: ManscdpNode, spec: FieldSpec<T>): Partial<T> {
  const out: Record<string, string> = {};
  for (const [prop, tag] of spec) {
    const text = getText(node, tag);
    if (text !== undefined) out[prop] = text;
  }
  return out as Partial<T>;
}

/** Appends the defined string fields of `value` to `node`, in `spec` order. */
export function writeFields<T>(node: ManscdpNode, value: T, spec: FieldSpec<T>): ManscdpNode {
  for (const [prop, tag] of spec) {
    const v = value[prop];
    if (v !== undefined && v !== null) node[tag] = String(v);
  }
  return node;
}

/** Children of `node` whose tag is none of `known` (case-insensitive), for lossless round trips. */
export function extraFields(node: ManscdpNode, known: ReadonlyArray<string>): ManscdpNode | undefined {
  const knownLower = new Set(known.map((k) => k.toLowerCase()));
  let extra: ManscdpNode | undefined;
  for (const [key, value] of Object.entries(node)) {
    if (knownLower.has(key.toLowerCase()) || key === TEXT_KEY || key.startsWith(ATTRIBUTE_PREFIX)) continue;
    extra ??= {};
    extra[key] = value;
  }
  return extra;
}

export function specTags<T>(spec: FieldSpec<T>): string[] {
  return spec.map(([, tag]) => tag);
}
