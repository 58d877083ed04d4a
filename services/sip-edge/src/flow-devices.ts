// Which device last spoke on a flow (issue 14, GB/T 28181-2016 §9.12). A device's voice-broadcast INVITE
// names its audio output channel in From, not the device, and nothing in it names the device: the edge
// places it by the device that registered on the flow it comes from, as the shard matches it (the flow
// the device is bound to, SPEC SEC-1). §9.12 has the device answer the Broadcast MESSAGE (a MESSAGE with
// From = the device) just before it INVITEs, on the same flow, so the entry is fresh when it is needed —
// after an edge restart too, with nothing kept across it.
//
// Keyed by the packet's source (never by the headers): a device can only name the device of its own flow,
// and the shard still checks the INVITE's flow against the device's binding, so a wrong entry costs that
// INVITE, nothing else. Bounded: the oldest entry goes first (Map insertion order), re-learnt at the
// device's next message.
import type { Flow } from '@vms/sip';

/** Flows remembered by default (each a few dozen bytes: 100,000 ≈ 10 MB). */
export const DEFAULT_MAX_FLOW_DEVICES = 100_000;

export class FlowDevices {
  readonly #devices = new Map<string, string>();

  constructor(readonly max: number = DEFAULT_MAX_FLOW_DEVICES) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('max flow devices must be a positive integer');
  }

  /** A TCP connection is its own flow (its id); a UDP flow is the source address and port. */
  static key(flow: Flow): string {
    return flow.transport === 'tcp' && flow.connectionId !== undefined ? `t#${flow.connectionId}` : `${flow.transport}|${flow.remoteAddress}|${flow.remotePort}`;
  }

  /** On every device request placed by its From (REGISTER, MESSAGE, NOTIFY): cheap when nothing changed. */
  learn(flow: Flow, deviceId: string): void {
    const key = FlowDevices.key(flow);
    const known = this.#devices.get(key);
    if (known === deviceId) return;
    if (known !== undefined) this.#devices.delete(key);
    else if (this.#devices.size >= this.max) {
      const oldest = this.#devices.keys().next();
      if (oldest.done !== true) this.#devices.delete(oldest.value);
    }
    this.#devices.set(key, deviceId);
  }

  deviceOn(flow: Flow): string | undefined {
    return this.#devices.get(FlowDevices.key(flow));
  }

  get size(): number {
    return this.#devices.size;
  }
}
