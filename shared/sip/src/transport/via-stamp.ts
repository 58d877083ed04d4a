import type { ViaHop } from '../message/types.ts';

export const DEFAULT_SIP_PORT = 5060; // RFC 3261 §19.1.2 default port for sip: over UDP/TCP

const unbracket = (h: string): string => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h);

/**
 * RFC 3261 §18.2.1 + RFC 3581 §4, applied to the top Via of every inbound request: `received` when
 * the sent-by host is not the packet's source address, and — when the client asked with a bare
 * `rport` (or the operator forces it for NAT'd devices that forget to ask) — `rport=<source port>`
 * plus `received`, even if the address matches. Mutates `hop.params`; returns whether it changed.
 */
export function stampReceived(hop: ViaHop, srcAddress: string, srcPort: number, forceRport = false): boolean {
  const src = unbracket(srcAddress);
  let changed = false;
  const wantsRport = hop.params.has('rport') || forceRport;
  if (wantsRport) {
    hop.params.set('rport', String(srcPort));
    changed = true;
  }
  if (wantsRport || unbracket(hop.host).toLowerCase() !== src.toLowerCase()) {
    hop.params.set('received', src);
    changed = true;
  }
  return changed;
}

/**
 * RFC 3261 §18.2.2 / RFC 3581 §4: where an unreliable-transport response goes — `received` (else
 * sent-by host) and the `rport` value (else sent-by port, else 5060). `maddr` (multicast) is not
 * used by GB28181 and deliberately ignored.
 */
export function responseDestination(hop: ViaHop): { host: string; port: number } {
  const received = hop.params.get('received');
  const rport = hop.params.get('rport');
  const rportNum = rport !== undefined && rport !== null ? Number(rport) : NaN;
  return {
    host: unbracket(received ?? hop.host),
    port: Number.isInteger(rportNum) && rportNum > 0 && rportNum < 65536 ? rportNum : (hop.port ?? DEFAULT_SIP_PORT),
  };
}
