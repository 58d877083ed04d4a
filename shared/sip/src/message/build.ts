import { randomBytes } from 'node:crypto';
import { SipParseError } from '../errors.ts';
import { reasonPhrase, SipStatus } from '../status.ts';
import { getTo } from './accessors.ts';
import { SipHeaders } from './headers.ts';
import { parseNameAddr, formatNameAddr } from './name-addr.ts';
import type { NameAddr, SipRequest, SipResponse, SipUri, ViaHop } from './types.ts';
import { formatUri, parseUri } from './uri.ts';
import { formatVia } from './via.ts';

/** RFC 3261 §8.1.1.7: branches of RFC 3261-compliant elements start with this magic cookie. */
export const BRANCH_MAGIC_COOKIE = 'z9hG4bK';
/** RFC 3261 §8.1.1.6: initial Max-Forwards. */
export const DEFAULT_MAX_FORWARDS = 70;

/**
 * CSPRNG bytes drawn in blocks: one randomBytes() call per 4 KiB instead of one per tag or branch
 * (a small randomBytes() call costs more than building the rest of a response). Every byte is used once.
 */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

function randomHex(bytes: number): string {
  if (randomOffset + bytes > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomOffset = 0;
  }
  const hex = randomPool.toString('hex', randomOffset, randomOffset + bytes);
  randomOffset += bytes;
  return hex;
}

/** RFC 3261 §19.3: at least 32 random bits; 64 here, hex so every GB28181 device accepts it. */
export function generateTag(): string {
  return randomHex(8);
}

/** RFC 3261 §8.1.1.7: unique across space and time; 80 random bits after the magic cookie. */
export function generateBranch(): string {
  return BRANCH_MAGIC_COOKIE + randomHex(10);
}

/** RFC 3261 §8.1.1.4: 128 random bits, optionally `@host` (GB28181 peers commonly add it). */
export function generateCallId(host?: string): string {
  const id = randomBytes(16).toString('hex');
  return host === undefined ? id : `${id}@${host}`;
}

type AddrInput = NameAddr | string;

export interface CreateRequestOptions {
  method: string;
  uri: SipUri | string;
  /** A From tag is added when missing (RFC 3261 §8.1.1.3). */
  from: AddrInput;
  to: AddrInput;
  cseq: number;
  callId?: string;
  /** Omit to let the transport push its own Via with a fresh branch. */
  via?: ViaHop | readonly ViaHop[];
  contact?: AddrInput | readonly AddrInput[];
  /** Pre-loaded Route set (RFC 3261 §8.1.1.1), one Route header per entry, in order. */
  route?: readonly AddrInput[];
  maxForwards?: number;
  /** Extra headers, appended in order after the mandatory ones. */
  headers?: Iterable<readonly [string, string]>;
  /** Buffers go out verbatim (GB2312 MANSCDP bodies); strings are encoded UTF-8. */
  body?: Buffer | string;
  contentType?: string;
}

/** A request with the RFC 3261 §8.1.1 header set; Content-Length is added by the serializer. */
export function createRequest(opts: CreateRequestOptions): SipRequest {
  const h = new SipHeaders();
  const vias = opts.via === undefined ? [] : Array.isArray(opts.via) ? opts.via : [opts.via as ViaHop];
  for (const v of vias) h.append('Via', formatVia(v));
  h.append('Max-Forwards', String(opts.maxForwards ?? DEFAULT_MAX_FORWARDS));
  for (const r of opts.route ?? []) h.append('Route', addr(r));
  h.append('From', withTag(addr(opts.from), generateTag));
  h.append('To', addr(opts.to));
  h.append('Call-ID', opts.callId ?? generateCallId());
  h.append('CSeq', `${opts.cseq} ${opts.method}`);
  const contacts = opts.contact === undefined ? [] : Array.isArray(opts.contact) ? opts.contact : [opts.contact as AddrInput];
  for (const c of contacts) h.append('Contact', addr(c));
  for (const [n, v] of opts.headers ?? []) h.append(n, v);
  const body = toBody(opts.body);
  if (body.length > 0 && opts.contentType !== undefined) h.append('Content-Type', opts.contentType);
  const uri = typeof opts.uri === 'string' ? parseUri(opts.uri) : opts.uri;
  return { type: 'request', method: opts.method, uri, rawUri: formatUri(uri), headers: h, body };
}

export interface CreateResponseOptions {
  /** To tag for a request that has none; default generated (not for 100 Trying, RFC 3261 §8.2.6.2). */
  toTag?: string;
  contact?: AddrInput | readonly AddrInput[];
  headers?: Iterable<readonly [string, string]>;
  body?: Buffer | string;
  contentType?: string;
}

/**
 * RFC 3261 §8.2.6: a response copying the request's Via lines (all, in order), From, Call-ID and
 * CSeq verbatim, and its To with a tag added when the request had none. Also copies Timestamp into
 * 100 (§8.2.6.1) and Record-Route into 1xx/2xx answers to dialog-creating requests (§12.1.1).
 * Works from raw header text, so it also answers requests whose other headers are malformed.
 */
export function createResponse(req: SipRequest, status: number, reason?: string, opts: CreateResponseOptions = {}): SipResponse {
  const h = new SipHeaders();
  for (const v of req.headers.getLines('Via')) h.append('Via', v);
  h.adoptParsed(req.headers); // the same Via and From strings: their parses are reused (issue 11)
  copy(req, h, 'From');
  const to = req.headers.get('To');
  if (to !== undefined) {
    const tag = opts.toTag ?? (status === SipStatus.Trying ? undefined : generateTag);
    h.append('To', tag === undefined ? to : withTag(to, typeof tag === 'string' ? () => tag : tag, req));
  }
  copy(req, h, 'Call-ID');
  copy(req, h, 'CSeq');
  if (status === SipStatus.Trying) copy(req, h, 'Timestamp');
  if (status > SipStatus.Trying && status < 300 && (req.method === 'INVITE' || req.method === 'SUBSCRIBE')) {
    copy(req, h, 'Record-Route');
  }
  const contacts = opts.contact === undefined ? [] : Array.isArray(opts.contact) ? opts.contact : [opts.contact as AddrInput];
  for (const c of contacts) h.append('Contact', addr(c));
  for (const [n, v] of opts.headers ?? []) h.append(n, v);
  const body = toBody(opts.body);
  if (body.length > 0 && opts.contentType !== undefined) h.append('Content-Type', opts.contentType);
  return { type: 'response', status, reason: reason ?? reasonPhrase(status), headers: h, body };
}

function copy(req: SipRequest, h: SipHeaders, name: string): void {
  for (const v of req.headers.getLines(name)) h.append(name, v);
}

function addr(a: AddrInput): string {
  return typeof a === 'string' ? a : formatNameAddr(a);
}

function toBody(body: Buffer | string | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/**
 * Appends `;tag=` to a From/To value unless it already has one. Textual, so the rest of the value is
 * kept byte-for-byte; for an addr-spec without `<>` the appended tag is a header parameter, as
 * RFC 3261 §20.10 requires. A value we cannot parse is searched for `;tag=` case-insensitively.
 */
/** `of`: the request whose To `value` is (its parse is reused, issue 11). */
function withTag(value: string, makeTag: () => string, of?: SipRequest): string {
  let hasTag: boolean;
  try {
    hasTag = (of === undefined ? parseNameAddr(value) : getTo(of)).params.has('tag');
  } catch (err) {
    if (!(err instanceof SipParseError)) throw err;
    hasTag = /;\s*tag\s*=/i.test(value);
  }
  return hasTag ? value : `${value};tag=${makeTag()}`;
}
