// The registered devices by the UDP flow they registered from (SPEC SEC-1's binding: source address and
// port), for the keepalive shortcut (message.handler.ts): a keepalive finds its device by the flow it
// came on — one lookup by the source address, where the rinfo string and the stored one compare inside
// V8's builtin — instead of by the 20-digit id sliced from the datagram, whose lookup in a Map of every
// session compares that slice with each same-length key of its hash chain in a runtime call (~1.1k
// instructions per keepalive under callgrind, docs/benchmarks.md). The caller still checks the flow
// and the id, so the index only ever saves the id lookup: when it names no device or several (devices
// behind one SIP edge, a test rig sharing a socket), the caller looks up by id as before.
//
// Per address: the one session registered from it (the usual fleet: one device per address), else its
// ports (devices behind one NAT), each with its one session or, when several share the flow, all of them.
import type { Flow } from '@vms/sip';

/** What the index holds of a session: its id and the flow it was registered from. */
export interface FlowBound {
  readonly deviceId: string;
  readonly flow: Flow;
}

type PortEntry<S> = S | S[];

export class UdpFlowIndex<S extends FlowBound> {
  readonly #byAddress = new Map<string, S | Map<number, PortEntry<S>>>();

  /** Whether `flow` is one the index keeps (UDP; TCP sessions are bound to a connection, and never keepalive here). */
  static indexed(flow: Flow): boolean {
    return flow.transport === 'udp' && flow.connectionId === undefined;
  }

  add(s: S): void {
    if (!UdpFlowIndex.indexed(s.flow)) return;
    const address = s.flow.remoteAddress;
    const slot = this.#byAddress.get(address);
    if (slot === undefined) {
      this.#byAddress.set(address, s);
      return;
    }
    let ports: Map<number, PortEntry<S>>;
    if (slot instanceof Map) ports = slot;
    else {
      ports = new Map();
      putPort(ports, slot);
      this.#byAddress.set(address, ports);
    }
    putPort(ports, s);
  }

  remove(s: S): void {
    if (!UdpFlowIndex.indexed(s.flow)) return;
    const address = s.flow.remoteAddress;
    const slot = this.#byAddress.get(address);
    if (slot === undefined) return;
    if (!(slot instanceof Map)) {
      if (slot === s) this.#byAddress.delete(address);
      return;
    }
    const port = s.flow.remotePort;
    const entry = slot.get(port);
    if (entry === s) slot.delete(port);
    else if (Array.isArray(entry)) {
      const i = entry.indexOf(s);
      if (i >= 0) entry.splice(i, 1);
      if (entry.length === 1) slot.set(port, entry[0] as S);
    }
    if (slot.size === 0) this.#byAddress.delete(address);
  }

  /** The one session registered from `flow`'s address and port; undefined when none or several. */
  sole(flow: Flow): S | undefined {
    const slot = this.#byAddress.get(flow.remoteAddress);
    if (slot === undefined) return undefined;
    if (!(slot instanceof Map)) return slot.flow.remotePort === flow.remotePort ? slot : undefined;
    const entry = slot.get(flow.remotePort);
    return entry === undefined || Array.isArray(entry) ? undefined : entry;
  }

  /** How many addresses it holds (tests). */
  get addresses(): number {
    return this.#byAddress.size;
  }
}

function putPort<S extends FlowBound>(ports: Map<number, PortEntry<S>>, s: S): void {
  const port = s.flow.remotePort;
  const entry = ports.get(port);
  if (entry === undefined) ports.set(port, s);
  else if (Array.isArray(entry)) entry.push(s);
  else ports.set(port, [entry, s]);
}
