/**
 * Generic MANSCDP codec (`Application/MANSCDP+xml`, GB/T 28181-2016 §A.2): bytes in the device's
 * charset <-> `{ root, cmdType, sn, deviceId, fields }`. Typed commands are built on top of this
 * (see commands/); an unknown CmdType is still a valid message here and is never an error.
 */
import { decodeBody, encodeText, normalizeCharset, declaredEncoding, xmlDeclaration, type ManscdpCharset } from './charset.ts';
import { GbMissingFieldError, GbNotManscdpError, GbTooLargeError } from './errors.ts';
import { getText, requireText } from './fields.ts';
import { buildXmlElement, parseXmlDocument, type ManscdpNode } from './xml.ts';

/** §A.2.1: the four top-level elements of a MANSCDP body. */
export const MANSCDP_ROOTS = ['Query', 'Response', 'Notify', 'Control'] as const;
export type ManscdpRoot = (typeof MANSCDP_ROOTS)[number];

/** CmdType values of GB/T 28181-2016 Annex A plus those the 2022 revision added. */
export const CMD_TYPES = [
  'Keepalive',
  'Catalog',
  'DeviceInfo',
  'DeviceStatus',
  'RecordInfo',
  'DeviceControl',
  'DeviceConfig',
  'ConfigDownload',
  'PresetQuery',
  'Alarm',
  'MobilePosition',
  'MediaStatus',
  'Broadcast',
  // GB/T 28181-2022 additions
  'HomePositionQuery',
  'CruiseTrackListQuery',
  'CruiseTrackQuery',
  'PTZPosition',
  'SDCardStatus',
  'UploadSnapShotFinished',
  'VideoUploadNotify',
  'DeviceUpgradeResult',
] as const;
export type KnownCmdType = (typeof CMD_TYPES)[number];

/**
 * Default size limit. A single UDP datagram carries at most 65,507 bytes, and real responses get
 * close to 8 KiB (20 RecordInfo items in one 7.7 KB datagram, sample 10); 64 KiB leaves room for
 * TCP devices that pack long catalogs into one MESSAGE while bounding parser work.
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** §A.2 examples declare GB2312; it is what devices expect unless they announced otherwise. */
export const DEFAULT_CHARSET: ManscdpCharset = 'GB2312';

export interface ParseOptions {
  /** Bodies larger than this many bytes are refused with GB_ERR_TOO_LARGE. */
  maxBytes?: number;
}

export interface BodyEncoding {
  /** Charset the bytes were really in; answer the device in it. */
  charset: ManscdpCharset;
  /** Raw label of the XML declaration, if any. */
  declared?: string;
  /** The bytes contradicted the declaration (UTF-8 bytes declared GB2312...). */
  mismatch: boolean;
}

export interface ManscdpMessage {
  root: ManscdpRoot;
  /** Canonical spelling for known values (`catalog` -> `Catalog`), the raw value otherwise. */
  cmdType: string;
  /** Kept as sent: a string, never a number. */
  sn: string;
  /** `DeviceID`; for a Broadcast Notify, which has none (§A.2.5), the `TargetID`. */
  deviceId: string;
  /** Every child of the root except CmdType, SN and DeviceID. */
  fields: ManscdpNode;
  encoding: BodyEncoding;
}

const HEADER_TAGS = ['CmdType', 'SN', 'DeviceID'];

export function parseManscdp(body: Uint8Array | string, opts: ParseOptions = {}): ManscdpMessage {
  const limit = opts.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  const size = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  if (size > limit) throw new GbTooLargeError(size, limit);

  const { text, encoding } = decode(body);
  const { rootName, root: rootValue } = parseXmlDocument(text);
  const root = canonicalRoot(rootName);
  const node: ManscdpNode = typeof rootValue === 'string' || Array.isArray(rootValue) ? {} : rootValue;

  const cmdType = canonicalCmdType(requireText(node, 'CmdType'));
  const sn = requireText(node, 'SN');
  const deviceId = getText(node, 'DeviceID') || (cmdType === 'Broadcast' ? getText(node, 'TargetID') : undefined);
  if (deviceId === undefined || deviceId === '') throw new GbMissingFieldError('DeviceID');

  const fields: ManscdpNode = {};
  const header = new Set(HEADER_TAGS.map((t) => t.toLowerCase()));
  for (const [key, value] of Object.entries(node)) if (!header.has(key.toLowerCase())) fields[key] = value;
  return { root, cmdType, sn, deviceId, fields, encoding };
}

function decode(body: Uint8Array | string): { text: string; encoding: BodyEncoding } {
  if (typeof body === 'string') {
    const declared = declaredEncoding(Buffer.from(body.slice(0, 256), 'latin1'));
    const charset = (declared === undefined ? undefined : normalizeCharset(declared)) ?? 'UTF-8';
    return { text: body, encoding: declared === undefined ? { charset, mismatch: false } : { charset, declared, mismatch: false } };
  }
  const { text, ...encoding } = decodeBody(body);
  return { text, encoding };
}

function canonicalRoot(name: string): ManscdpRoot {
  const lower = name.toLowerCase();
  const root = MANSCDP_ROOTS.find((r) => r.toLowerCase() === lower);
  if (root === undefined) throw new GbNotManscdpError(name);
  return root;
}

const CMD_TYPE_BY_LOWER = new Map<string, KnownCmdType>(CMD_TYPES.map((c) => [c.toLowerCase(), c]));

/** Devices vary the case of CmdType values (`keepalive`, `CATALOG`); known ones are canonicalised. */
export function canonicalCmdType(raw: string): string {
  return CMD_TYPE_BY_LOWER.get(raw.toLowerCase()) ?? raw;
}

export interface ManscdpDocument {
  root: ManscdpRoot;
  cmdType: string;
  sn: string | number;
  /** Omitted only by bodies that have none (Broadcast Notify). */
  deviceId?: string;
  /** Further children, in order. */
  fields?: ManscdpNode;
}

export interface BuildOptions {
  /** Charset of the produced bytes and of the XML declaration; defaults to GB2312. */
  charset?: ManscdpCharset;
}

/** The XML text of a document, without declaration. */
export function renderManscdp(doc: ManscdpDocument): string {
  const content: ManscdpNode = { CmdType: doc.cmdType, SN: String(doc.sn) };
  if (doc.deviceId !== undefined) content['DeviceID'] = doc.deviceId;
  for (const [key, value] of Object.entries(doc.fields ?? {})) content[key] = value;
  return buildXmlElement(doc.root, content);
}

/** Declaration + document, encoded in the requested charset (GB_ERR_CHARSET if not representable). */
export function buildManscdp(doc: ManscdpDocument, opts: BuildOptions = {}): Buffer {
  const charset = opts.charset ?? DEFAULT_CHARSET;
  return encodeText(`${xmlDeclaration(charset)}\r\n${renderManscdp(doc)}\r\n`, charset);
}
