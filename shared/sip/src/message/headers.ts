/**
 * Ordered, case-insensitive SIP header store. Compact forms (RFC 3261 §7.3.3 plus RFC 3515/4028 ones
 * GB28181 devices use) are expanded on the way in, so `get('Via')` finds a `v:` header.
 * Values are kept as raw strings; structured accessors live in `accessors.ts`.
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

/** Canonical spelling for the headers we write; anything else keeps the spelling it arrived with. */
const CANONICAL: Record<string, string> = {
  'call-id': 'Call-ID',
  cseq: 'CSeq',
  'www-authenticate': 'WWW-Authenticate',
  'mime-version': 'MIME-Version',
  'rseq': 'RSeq',
  'rack': 'RAck',
};

export function canonicalHeaderName(name: string): string {
  const trimmed = name.trim();
  const lower = trimmed.toLowerCase();
  if (lower.length === 1 && COMPACT[lower] !== undefined) return COMPACT[lower];
  const known = CANONICAL[lower];
  if (known !== undefined) return known;
  return lower.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
}

export class SipHeaders {
  // [canonical name, value] in wire order; lookups are by lower-cased canonical name.
  readonly #entries: Array<[string, string]> = [];

  constructor(init?: Iterable<readonly [string, string]>) {
    if (init !== undefined) for (const [n, v] of init) this.append(n, v);
  }

  append(name: string, value: string): this {
    this.#entries.push([canonicalHeaderName(name), value]);
    return this;
  }

  /** Replaces every occurrence of `name` with one value, keeping the position of the first. */
  set(name: string, value: string): this {
    const canon = canonicalHeaderName(name);
    const key = canon.toLowerCase();
    const at = this.#entries.findIndex(([n]) => n.toLowerCase() === key);
    if (at === -1) {
      this.#entries.push([canon, value]);
      return this;
    }
    this.#entries[at] = [canon, value];
    for (let i = this.#entries.length - 1; i > at; i--) {
      if (this.#entries[i]![0].toLowerCase() === key) this.#entries.splice(i, 1);
    }
    return this;
  }

  /** Inserts before every existing header (used to push a Via on top). */
  prepend(name: string, value: string): this {
    this.#entries.unshift([canonicalHeaderName(name), value]);
    return this;
  }

  get(name: string): string | undefined {
    const key = canonicalHeaderName(name).toLowerCase();
    for (const [n, v] of this.#entries) if (n.toLowerCase() === key) return v;
    return undefined;
  }

  /** Every header line with this name, unsplit (one entry per line as received). */
  getLines(name: string): string[] {
    const key = canonicalHeaderName(name).toLowerCase();
    const out: string[] = [];
    for (const [n, v] of this.#entries) if (n.toLowerCase() === key) out.push(v);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  delete(name: string): this {
    const key = canonicalHeaderName(name).toLowerCase();
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      if (this.#entries[i]![0].toLowerCase() === key) this.#entries.splice(i, 1);
    }
    return this;
  }

  entries(): ReadonlyArray<readonly [string, string]> {
    return this.#entries;
  }

  clone(): SipHeaders {
    return new SipHeaders(this.#entries);
  }
}
