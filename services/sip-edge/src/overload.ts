// The edge's overload control (issue 11 target 2): past what this process can forward, new REGISTERs
// are answered 503 + Retry-After from the datagram's bytes instead of waiting in the SIP UDP socket's
// receive queue. Every device's datagram arrives on that one socket: while it is seconds behind, each
// REGISTER in it ages past the device's 500 ms retransmission timer (RFC 3261 §17.1.2.2 Timer E) and
// comes again, doubling, and the keepalives of registered devices wait behind the heap until their
// owner keys lapse (fleet-kill, 300,000 devices: ~20 REGISTERs forwarded per registered device, the
// edge's queue full at 6.5–8 MB while the shards' stayed small). The rate ceilings
// (VMS_EDGE_MAX_REQUESTS_PER_SEC, per address) never saw it: they bound arrivals, not the backlog.
//
// The controller and its sampler are the shards' (@vms/sip overload/: the receive queue from
// /proc/net/udp, event-loop utilization where that cannot be read; the shed share cut TCP-like while
// over the marks, given back slowly; Retry-After sized by the backlog, a return calendar booked at the
// peak rate of first REGISTERs admitted since shedding began; the receive buffer shrunk at the cap). What the
// edge sheds, decided here from the bytes: a REGISTER without Authorization from a flow it forwards for
// no device (flow-devices.ts) — a device starting to register. Never shed: the answer to a challenge
// (Authorization: finishing it is cheaper than starting over), a refresh by the device that last spoke
// on its flow (it keeps the device online), keepalives and every other request, responses.
import { answersChallenge, buildDatagramResponse, createShedSampler, fromUser, peekDatagramRequest, SipStatus, stampDatagramVia, type Flow, type RegisterShedder, type ShedPolicy, type SipLogger } from '@vms/sip';
import type { DatagramOut } from './datagram-forward.ts';
import type { FlowDevices } from './flow-devices.ts';

export interface EdgeOverloadOptions {
  readonly log: SipLogger;
  /** The edge's SIP UDP port, whose receive queue is the main signal. */
  readonly sipPort: number;
  /** Flows the edge forwards for a device: a REGISTER from one is a refresh. */
  readonly devices: FlowDevices;
  /** The marks (VMS_EDGE_SHED_*); default the shards' DEFAULT_SHED_POLICY. */
  readonly policy?: ShedPolicy;
  /** Math.random by default; tests decide it. */
  readonly random?: () => number;
  /** Resizes the SIP UDP socket's receive buffer (shrunk at the cap, `receiveBufferBytes` again after). */
  readonly setReceiveBuffer?: (bytes: number) => void;
  readonly receiveBufferBytes?: number;
  /** The sampler's signals, injected by tests (default /proc/net/udp and perf_hooks). */
  readonly readReceiveQueue?: (port: number) => number | null;
  readonly utilization?: () => number;
}

export interface EdgeOverload {
  /**
   * A device's request datagram: the 503 to send back instead of forwarding it, or undefined (go on).
   * Counts the REGISTERs the controller decides on.
   */
  shed(data: Buffer, flow: Flow): DatagramOut | undefined;
  readonly shedder: RegisterShedder;
  close(): void;
}

const REGISTER_LINE = Buffer.from('REGISTER ', 'latin1');

export function createEdgeOverload(o: EdgeOverloadOptions): EdgeOverload {
  const sampler = createShedSampler({
    log: o.log,
    sipPort: o.sipPort,
    ...(o.policy === undefined ? {} : { policy: o.policy }),
    ...(o.setReceiveBuffer === undefined ? {} : { setReceiveBuffer: o.setReceiveBuffer }),
    ...(o.receiveBufferBytes === undefined ? {} : { receiveBufferBytes: o.receiveBufferBytes }),
    ...(o.readReceiveQueue === undefined ? {} : { readReceiveQueue: o.readReceiveQueue }),
    ...(o.utilization === undefined ? {} : { utilization: o.utilization }),
  });
  const shedder = sampler.shedder;
  const random = o.random ?? Math.random;
  return {
    shedder,
    shed(data, flow) {
      // on every device datagram (keepalives included): one byte decides for all but REGISTERs
      if (data[0] !== 82 /* R */ || data.length < REGISTER_LINE.length || data.compare(REGISTER_LINE, 0, REGISTER_LINE.length, 0, REGISTER_LINE.length) !== 0) return undefined;
      // an answer to a challenge is neither shed nor counted: it finishes work already started (as on the shards)
      if (answersChallenge(data)) return undefined;
      sampler.arrived();
      if (shedder.fraction === 0 || !shedder.shouldShed(random())) return undefined;
      const peeked = peekDatagramRequest(data);
      if (peeked === undefined) return undefined; // not answerable from the bytes: forwarded, the shard decides
      // a refresh: the device that last spoke on this flow registering again. Another id from a known flow
      // is a new device (several share one flow behind a NAT or a lower platform) and is shed like any
      // (shouldShed was asked before this check, which needs the peek: a refresh drawn to go on counts in
      // the admitted rate that sizes Retry-After, the admitted share of refreshes, 1 % at the cap)
      const known = o.devices.deviceOn(flow);
      if (known !== undefined && known === fromUser(peeked.from)) return undefined;
      // RFC 3261 §8.2.6: Via (stamped, §18.2.1), From, To (+ tag), Call-ID and CSeq of the request; sent
      // where the stamped Via says (§18.2.2), as the stack's stateless answers are
      const via = stampDatagramVia(peeked, flow, false);
      if (via === undefined) return undefined;
      const retryAfter = String(shedder.retryAfterSec(random()));
      return { data: buildDatagramResponse(peeked, via, SipStatus.ServiceUnavailable, undefined, [['Retry-After', retryAfter]]), host: via.host, port: via.port };
    },
    close: () => sampler.close(),
  };
}
