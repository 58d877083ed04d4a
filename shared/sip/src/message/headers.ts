/**
 * Ordered, case-insensitive SIP header store. Compact forms (RFC 3261 §7.3.3 plus RFC 3515/4028 ones
 * GB28181 devices use) are expanded on the way in, so `get('Via')` finds a `v:` header.
 * Values are kept as raw strings; structured accessors live in `accessors.ts`.
 *
 * Values parsed off the wire are "binary" strings (latin1: one char per byte), so GB2312 or UTF-8
 * bytes in a Subject or display name survive a parse/serialize round trip untouched.
 */
const COMPACT: Record<string, string> = {
  i: 'Call-ID',
  m: 'Contact',
  e: 'Content-Encoding',
  l: 'Content-Length',
  c: 'Content-Type',
  f: 'From',
  s: 'Subject',
  k: 'Supported',
  t: 'To',
  v: 'Via',
  o: 'Event',
  u: 'Allow-Events',
  r: 'Refer-To',
  b: 'Referred-By',
  x: 'Session-Expires',
  a: 'Accept-Contact',
  j: 'Reject-Contact',
  d: 'Request-Disposition',
};

/**
 * Canonical spelling of the standard headers (RFC 3261 §20 and the extensions seen in GB28181
 * traffic). Any other name keeps the spelling it arrived with: some devices match vendor headers
 * such as `X-GB-Ver` case-sensitively, so we do not re-case what we do not know.
 */
const STANDARD = [
  'Accept', 'Accept-Contact', 'Accept-Encoding', 'Accept-Language', 'Alert-Info', 'Allow', 'Allow-Events',
  'Authentication-Info', 'Authorization', 'Call-ID', 'Call-Info', 'Contact', 'Content-Disposition',
  'Content-Encoding', 'Content-Language', 'Content-Length', 'Content-Type', 'CSeq', 'Date', 'Error-Info',
  'Event', 'Expires', 'From', 'In-Reply-To', 'Max-Forwards', 'MIME-Version', 'Min-Expires', 'Min-SE',
  'Organization', 'P-Asserted-Identity', 'Path', 'Priority', 'Proxy-Authenticate', 'Proxy-Authorization',
  'Proxy-Require', 'RAck', 'Reason', 'Record-Route', 'Refer-To', 'Referred-By', 'Reject-Contact',
  'Reply-To', 'Request-Disposition', 'Require', 'Retry-After', 'Route', 'RSeq', 'Server', 'Service-Route',
  'Session-Expires', 'Subject', 'Subscription-State', 'Supported', 'Timestamp', 'To', 'Unsupported',
  'User-Agent', 'Via', 'Warning', 'WWW-Authenticate',
];
const CANONICAL = new Map<string, string>(STANDARD.map((n) => [n.toLowerCase(), n]));

interface NameInfo {
  canon: string;
  key: string; // lower-cased canonical name: what lookups compare
}

// Names come from the network, so the memo is bounded; past the cap we simply recompute.
const NAME_CACHE = new Map<string, NameInfo>();
const NAME_CACHE_MAX = 1024;

// The spellings nearly every message uses, resolved by a switch: hashing a freshly sliced name for
// a Map lookup costs more than the whole rest of the header line.
const info = (canon: string): NameInfo => ({ canon, key: canon.toLowerCase() });
const VIA = info('Via');
const FROM = info('From');
const TO = info('To');
const CALL_ID = info('Call-ID');
const CSEQ = info('CSeq');
const CONTACT = info('Contact');
const MAX_FORWARDS = info('Max-Forwards');
const CONTENT_TYPE = info('Content-Type');
const CONTENT_LENGTH = info('Content-Length');
const USER_AGENT = info('User-Agent');
const EXPIRES = info('Expires');
const AUTHORIZATION = info('Authorization');

function commonName(name: string): NameInfo | undefined {
  switch (name) {
    case 'Via': return VIA;
    case 'From': return FROM;
    case 'To': return TO;
    case 'Call-ID': return CALL_ID;
    case 'CSeq': return CSEQ;
    case 'Contact': return CONTACT;
    case 'Max-Forwards': return MAX_FORWARDS;
    case 'Content-Type': return CONTENT_TYPE;
    case 'Content-Length': return CONTENT_LENGTH;
    case 'User-Agent': return USER_AGENT;
    case 'Expires': return EXPIRES;
    case 'Authorization': return AUTHORIZATION; // the second leg of every registration
    default: return undefined;
  }
}

function nameInfo(name: string): NameInfo {
  const common = commonName(name);
  if (common !== undefined) return common;
  const cached = NAME_CACHE.get(name);
  if (cached !== undefined) return cached;
  const trimmed = name.trim();
  const lower = trimmed.toLowerCase();
  const canon = (lower.length === 1 ? COMPACT[lower] : undefined) ?? CANONICAL.get(lower) ?? trimmed;
  const computed = info(canon);
  if (NAME_CACHE.size < NAME_CACHE_MAX) NAME_CACHE.set(name, computed);
  return computed;
}

export function canonicalHeaderName(name: string): string {
  return nameInfo(name).canon;
}

export class SipHeaders {
  // [canonical name, value] in wire order; #keys[i] is the lookup key of #entries[i].
  readonly #entries: Array<[string, string]> = [];
  readonly #keys: string[] = [];
  /**
   * What accessors.ts parsed of this header set (the top Via, From, To: each parsed several times per
   * request otherwise, issue 11), as [raw, parsed] per slot: a parse is reused only while the header's
   * value is that very raw string, so any change of the header parses again.
   */
  #parsed: unknown[] | undefined;

  constructor(init?: Iterable<readonly [string, string]>) {
    if (init !== undefined) for (const [n, v] of init) this.append(n, v);
  }

  append(name: string, value: string): this {
    const info = nameInfo(name);
    this.#entries.push([info.canon, value]);
    this.#keys.push(info.key);
    return this;
  }

  /** Replaces every occurrence of `name` with one value, keeping the position of the first. */
  set(name: string, value: string): this {
    const info = nameInfo(name);
    const at = this.#keys.indexOf(info.key);
    if (at === -1) return this.append(name, value);
    this.#entries[at] = [info.canon, value];
    for (let i = this.#keys.length - 1; i > at; i--) {
      if (this.#keys[i] === info.key) this.#remove(i);
    }
    return this;
  }

  /** Replaces the value of the first line of `name` (appended when there is none); the other lines stay. */
  replaceFirst(name: string, value: string): this {
    const info = nameInfo(name);
    const at = this.#keys.indexOf(info.key);
    if (at === -1) return this.append(name, value);
    this.#entries[at] = [info.canon, value];
    return this;
  }

  /** Inserts before every existing header (used to push a Via on top). */
  prepend(name: string, value: string): this {
    const info = nameInfo(name);
    this.#entries.unshift([info.canon, value]);
    this.#keys.unshift(info.key);
    return this;
  }

  get(name: string): string | undefined {
    const at = this.#keys.indexOf(nameInfo(name).key);
    return at === -1 ? undefined : this.#entries[at]![1];
  }

  /** Every header line with this name, unsplit (one entry per line as received). */
  getLines(name: string): string[] {
    const key = nameInfo(name).key;
    const out: string[] = [];
    for (let i = 0; i < this.#keys.length; i++) if (this.#keys[i] === key) out.push(this.#entries[i]![1]);
    return out;
  }

  has(name: string): boolean {
    return this.#keys.includes(nameInfo(name).key);
  }

  delete(name: string): this {
    const key = nameInfo(name).key;
    for (let i = this.#keys.length - 1; i >= 0; i--) if (this.#keys[i] === key) this.#remove(i);
    return this;
  }

  get size(): number {
    return this.#entries.length;
  }

  entries(): ReadonlyArray<readonly [string, string]> {
    return this.#entries;
  }

  /**
   * @internal For accessors.ts: `parse(raw)`, computed once per header set and slot while the header's
   * value is `raw` (a pure function of it). The value is shared by every caller: never mutate it other
   * than to rewrite the header from it (stampReceived + rewriteTopVia, which keeps the stamped hop as the new line's parse).
   */
  parsedOnce<T>(slot: number, raw: string, parse: (raw: string) => T): T {
    const memo = (this.#parsed ??= []);
    if (memo[2 * slot] === raw) return memo[2 * slot + 1] as T;
    const value = parse(raw);
    memo[2 * slot] = raw;
    memo[2 * slot + 1] = value;
    return value;
  }

  /** @internal parsedOnce's memo for `slot` set to `value`, the parse of `raw` (whoever calls knows it is). */
  keepParsed(slot: number, raw: string, value: unknown): void {
    const memo = (this.#parsed ??= []);
    memo[2 * slot] = raw;
    memo[2 * slot + 1] = value;
  }

  /** @internal What `from` parsed, for headers copied from it (a response's Via, From): reused only where the value is the same. */
  adoptParsed(from: SipHeaders): void {
    if (from.#parsed !== undefined) this.#parsed = from.#parsed.slice();
  }

  clone(): SipHeaders {
    return new SipHeaders(this.#entries);
  }

  #remove(i: number): void {
    this.#entries.splice(i, 1);
    this.#keys.splice(i, 1);
  }
}
