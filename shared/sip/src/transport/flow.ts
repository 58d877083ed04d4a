/**
 * A flow (RFC 5626 §3 vocabulary): the path one message arrived on. Devices behind NAT can only be
 * reached back through the same path, so the app stores the flow of a device's REGISTER/keepalive
 * and passes it as the `target` of later requests.
 */
export type TransportName = 'udp' | 'tcp';

export interface Flow {
  readonly transport: TransportName;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly localPort: number;
  /** TCP only: the connection the message came on; gone connections fall back to a new connect. */
  readonly connectionId?: number;
}

/** A destination with no remembered flow: UDP datagram, or a (reused or new) TCP connection. */
export interface HostTarget {
  readonly host: string;
  readonly port: number;
  readonly transport: TransportName;
}

export type SendTarget = Flow | HostTarget;

export function isFlow(t: SendTarget): t is Flow {
  return (t as Flow).remoteAddress !== undefined;
}

export function targetHost(t: SendTarget): string {
  return isFlow(t) ? t.remoteAddress : t.host;
}

export function targetPort(t: SendTarget): number {
  return isFlow(t) ? t.remotePort : t.port;
}

/** `udp:1.2.3.4:5060` / `tcp:1.2.3.4:5060#12`: for logs and maps, never parsed back. */
export function flowKey(t: SendTarget): string {
  const base = `${t.transport}:${targetHost(t)}:${targetPort(t)}`;
  return isFlow(t) && t.connectionId !== undefined ? `${base}#${t.connectionId}` : base;
}

export function parseTransportName(raw: string | null | undefined): TransportName | undefined {
  const v = raw?.toLowerCase();
  return v === 'udp' || v === 'tcp' ? v : undefined;
}
