import type { SipHeaders } from './headers.ts';

/** Header/URI parameters keep their order; a flag parameter (`;lr`, `;rport`) has value `null`. */
export type Params = Map<string, string | null>;

/** RFC 3261 §19.1 SIP-URI / SIPS-URI; other schemes keep their raw text in `opaque`. */
export interface SipUri {
  scheme: string; // lower-cased: 'sip' | 'sips' | 'tel' | ...
  user: string | null; // still %-escaped as received
  password: string | null;
  host: string; // IPv6 kept with brackets, as written
  port: number | null;
  params: Params;
  headers: Params;
  /** For non-sip schemes: everything after `scheme:`. */
  opaque?: string;
}

/** name-addr / addr-spec with header parameters (From, To, Contact, Route, Record-Route). */
export interface NameAddr {
  displayName: string | null; // unquoted
  uri: SipUri;
  params: Params;
  /** Set only on the `Contact: *` entry of a REGISTER (RFC 3261 §10.2.2); its `uri` is then a placeholder. */
  wildcard?: true;
}

/** RFC 3261 §20.42 */
export interface ViaHop {
  protocol: string; // 'SIP/2.0'
  transport: string; // upper-cased: 'UDP' | 'TCP' | ...
  host: string;
  port: number | null;
  params: Params; // branch, received, rport (null when requested, number string when filled)
}

export interface CSeq {
  seq: number;
  method: string;
}

interface SipMessageBase {
  headers: SipHeaders;
  /** Raw body bytes: GB28181 bodies are GB2312 bytes, never re-encoded by the SIP layer. */
  body: Buffer;
}

export interface SipRequest extends SipMessageBase {
  type: 'request';
  method: string; // as received (methods are case-sensitive, RFC 3261 §7.1)
  uri: SipUri;
  /** Request-URI exactly as it appeared on the wire, for digest `uri=` checks and logs. */
  rawUri: string;
}

export interface SipResponse extends SipMessageBase {
  type: 'response';
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;
