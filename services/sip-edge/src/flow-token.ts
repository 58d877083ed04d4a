// The device's flow, carried in SIP instead of kept in memory (issue 14): the edge writes it in its Via on
// every request it forwards to a shard (responses find their way back without a transaction table) and in
// the Path of a REGISTER (the shard's requests to the device come back with it as Route). An edge restart
// loses nothing; any edge holding the secret decodes a UDP flow. A TCP connection lives on one edge: its
// id is only meaningful there (`edge` names it), elsewhere the device's address is dialled.
//
// Signed (HMAC-SHA256, 96 bits): the token comes back from shards but a device could write one in a Route
// of its own to make the edge send to an arbitrary address (a reflection); unsigned tokens are refused.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface DeviceFlowRef {
  readonly transport: 'udp' | 'tcp';
  readonly address: string;
  readonly port: number;
  /** TCP: the connection on the edge `edge` that the device's requests arrived on. */
  readonly connectionId?: number;
  readonly edge?: string;
}

const MAC_BYTES = 12;
const MAX_TOKEN_CHARS = 256;
/**
 * A device sends a keepalive a minute from the same flow: its token is computed and checked once, then
 * read from these maps (a verified token only). Bounded: emptied when full (an HMAC again, nothing lost).
 */
export const FLOW_CACHE_ENTRIES = 65_536;

export class FlowCodec {
  readonly #secret: Buffer;
  readonly #encoded = new Map<string, string>();
  readonly #decoded = new Map<string, DeviceFlowRef>();

  constructor(secret: Buffer) {
    if (secret.length < 16) throw new RangeError('flow secret must be at least 16 bytes');
    this.#secret = secret;
  }

  /** A URI/Via parameter value: base64url payload, `.`, base64url MAC. */
  encode(ref: DeviceFlowRef): string {
    const conn = ref.transport === 'tcp' && ref.connectionId !== undefined ? `${ref.connectionId}@${ref.edge ?? ''}` : '';
    const plain = `${ref.transport === 'tcp' ? 't' : 'u'}|${ref.address}|${ref.port}|${conn}`;
    const cached = this.#encoded.get(plain);
    if (cached !== undefined) return cached;
    const payload = Buffer.from(plain, 'latin1').toString('base64url');
    const token = `${payload}.${this.#mac(payload)}`;
    if (this.#encoded.size >= FLOW_CACHE_ENTRIES) this.#encoded.clear();
    this.#encoded.set(plain, token);
    return token;
  }

  /** The flow, or null for anything not made by an edge holding the secret. */
  decode(token: string): DeviceFlowRef | null {
    const cached = this.#decoded.get(token);
    if (cached !== undefined) return cached;
    const ref = this.#verify(token);
    if (ref !== null) {
      if (this.#decoded.size >= FLOW_CACHE_ENTRIES) this.#decoded.clear();
      this.#decoded.set(token, ref);
    }
    return ref;
  }

  #verify(token: string): DeviceFlowRef | null {
    if (token.length > MAX_TOKEN_CHARS) return null;
    const dot = token.indexOf('.');
    if (dot <= 0) return null;
    const payload = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    const want = Buffer.from(this.#mac(payload), 'base64url');
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return null;
    const parts = Buffer.from(payload, 'base64url').toString('latin1').split('|');
    if (parts.length !== 4) return null;
    const [t, address, portText, conn] = parts as [string, string, string, string];
    const port = Number(portText);
    if ((t !== 'u' && t !== 't') || address.length === 0 || !Number.isInteger(port) || port < 1 || port > 65535) return null;
    if (t === 'u') return { transport: 'udp', address, port };
    const at = conn.indexOf('@');
    const id = at < 0 ? NaN : Number(conn.slice(0, at));
    return Number.isInteger(id) ? { transport: 'tcp', address, port, connectionId: id, edge: conn.slice(at + 1) } : { transport: 'tcp', address, port };
  }

  #mac(payload: string): string {
    return createHmac('sha256', this.#secret).update(payload).digest().subarray(0, MAC_BYTES).toString('base64url');
  }
}
