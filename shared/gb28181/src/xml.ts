/**
 * The XML layer under MANSCDP (GB/T 28181-2016 Annex A): text in, a plain tree of strings out, and back.
 *
 * Safety rules, all enforced here so no caller can forget them:
 *  - DOCTYPE / ENTITY declarations are refused outright (no internal subset, hence no entity
 *    expansion, "billion laughs" or external entity fetches); only the five predefined entities and
 *    numeric character references are decoded, by this module, not by the parser.
 *  - Values are never converted: `SN` 007, ids with leading zeros, `0.0000` stay strings.
 *  - Exactly one root element; well-formedness is checked before parsing.
 *  - Nesting depth is bounded by the parser (maxNestedTags), so the tree walk below cannot recurse deep.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { GbDoctypeError, GbXmlError } from './errors.ts';

/** An element's content: its text, its children, or several same-named elements. */
export type ManscdpValue = string | ManscdpNode | ManscdpValue[];

/**
 * Children of an element by tag name. Attributes are keys prefixed with `@` (`@Num`); text of an
 * element that also has attributes or children is under `#text`. List members are always arrays,
 * even when a device sends a single one: `Item`, and the 2022 lists' `CruiseTrack` (in
 * CruiseTrackList) and `CruisePoint` (in CruisePointList), GB/T 28181-2022 §A.2.6.13/§A.2.6.14.
 */
export interface ManscdpNode {
  [tag: string]: ManscdpValue;
}

export const ATTRIBUTE_PREFIX = '@';
export const TEXT_KEY = '#text';
const CDATA_KEY = '#cdata';
/** Lower-cased names of list member elements (see ManscdpNode). */
const LIST_MEMBERS = new Set(['item', 'cruisetrack', 'cruisepoint']);
const MAX_NESTED_TAGS = 32; // MANSCDP documents nest 4-5 levels; anything deeper is hostile or broken

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: ATTRIBUTE_PREFIX,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  trimValues: true,
  cdataPropName: CDATA_KEY,
  maxNestedTags: MAX_NESTED_TAGS,
  jPath: false, // callbacks get a matcher instead of a built path string: ~15% faster, path unused
  isArray: (tagName, _path, _isLeaf, isAttribute) => !isAttribute && LIST_MEMBERS.has(tagName.toLowerCase()),
});

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: ATTRIBUTE_PREFIX,
  textNodeName: TEXT_KEY,
  format: true,
  indentBy: '',
  suppressEmptyNode: false,
  processEntities: true,
});

const DOCTYPE_RE = /<!\s*(?:DOCTYPE|ENTITY)/i;
// Leading whitespace (bodies starting with blank lines, sample 08) and trailing NULs / whitespace
// (devices that send C strings with their terminator) are not part of the document.
const LEADING_JUNK_RE = /^[\s\uFEFF]+/;

export interface XmlDocument {
  rootName: string;
  root: ManscdpValue;
}

export function parseXmlDocument(text: string): XmlDocument {
  const doc = trimTrailingJunk(text.replace(LEADING_JUNK_RE, ''));
  if (DOCTYPE_RE.test(doc)) throw new GbDoctypeError('DOCTYPE/ENTITY declarations are refused');
  let tree: Record<string, unknown>;
  try {
    const valid = XMLValidator.validate(doc);
    if (valid !== true) throw new GbXmlError(`malformed XML: ${valid.err.code} at line ${valid.err.line}`);
    tree = parser.parse(doc) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof GbXmlError) throw err;
    throw new GbXmlError('XML parser refused the body', { cause: err });
  }
  const roots = Object.keys(tree);
  if (roots.length !== 1) throw new GbXmlError('document must have exactly one root element');
  const rootName = roots[0] as string;
  const root = tree[rootName];
  if (Array.isArray(root)) throw new GbXmlError('document must have exactly one root element');
  return { rootName, root: normalize(root) };
}

/**
 * A loop, not `/[\s\0]+$/`: that regex retries from every whitespace run and is quadratic on a body
 * with a long run in the middle (60 KB of spaces took seconds).
 */
function trimTrailingJunk(text: string): string {
  let end = text.length;
  while (end > 0) {
    const c = text.charCodeAt(end - 1);
    if (c !== 0 && c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    end--;
  }
  return text.slice(0, end);
}

/** Serialises one element (children in insertion order) without the XML declaration. */
export function buildXmlElement(name: string, content: ManscdpNode): string {
  return (builder.build({ [name]: content }) as string).trim();
}

function normalize(value: unknown): ManscdpValue {
  if (typeof value === 'string') return decodeEntities(value);
  if (Array.isArray(value)) return value.map(normalize);
  if (value === null || typeof value !== 'object') return '';
  const node: ManscdpNode = {};
  let text: string | undefined;
  for (const [key, child] of Object.entries(value)) {
    if (key === CDATA_KEY) {
      // CDATA content is literal: no entity decoding.
      text = (text ?? '') + (Array.isArray(child) ? child.join('') : String(child));
    } else if (key === TEXT_KEY) {
      text = decodeEntities(String(child)) + (text ?? '');
    } else {
      node[key] = normalize(child);
    }
  }
  if (text === undefined) return node;
  if (Object.keys(node).length === 0) return text.trim();
  node[TEXT_KEY] = text.trim();
  return node;
}

const ENTITY_RE = /&(?:#x([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot|apos));/g;
const NAMED_ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const MAX_CODE_POINT = 0x10ffff;

/** XML 1.0 §4.6 predefined entities and §4.1 character references; anything else stays literal. */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY_RE, (whole, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED_ENTITIES[name] ?? whole;
    const cp = hex !== undefined ? parseInt(hex, 16) : parseInt(dec ?? '', 10);
    const valid = cp > 0 && cp <= MAX_CODE_POINT && !(cp >= 0xd800 && cp <= 0xdfff);
    return valid ? String.fromCodePoint(cp) : whole;
  });
}
