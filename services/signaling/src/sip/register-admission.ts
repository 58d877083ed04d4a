// Wires RegisterShedder (@vms/sip overload/register-shedding.ts) to the stack: a stateless REGISTER
// handler that answers 503 + Retry-After on the datagram shortcut while shedding, else the first leg's
// 401 challenge (register-challenge.ts), and passes everything else to the ordinary REGISTER handler,
// the count of REGISTER handlers in flight, and the sampler (@vms/sip overload/shed-sampler.ts: the SIP
// socket's receive queue from /proc/net/udp, event-loop utilization) that feeds the shedder every SAMPLE_MS.
import type { RequestHandler, StatelessAnswer, StatelessHandler, StatelessRequest } from '@vms/sip';
import { answersChallenge, createShedSampler, fromUser, SipStatus, type RegisterShedder, type ShedPolicy } from '@vms/sip';
import type { Logger } from 'pino';
import type { DeviceFlows } from './device-flows.ts';
import type { StatelessChallenge } from './register-challenge.ts';

// The controller, the sampler and the /proc reader live in @vms/sip (overload/): the SIP edge sheds the same way.
export { answersChallenge } from '@vms/sip';

export interface RegisterAdmission {
  /** For `stack.onStatelessRequest('REGISTER', …)`. */
  readonly stateless: StatelessHandler;
  /**
   * Its StatelessOptions.ordinary: answersChallenge. A REGISTER with Authorization (the second leg) is
   * never answered by `stateless`, which would only pass it on after a peek of the whole datagram
   * (issue 11: ~15k instructions a registration), so it goes to the ordinary handler unpeeked; not
   * shed, challenged by `challenge` only when the value holds no credentials — as the ordinary handler
   * challenges it; not counted in `arrivals` (a first leg or a refresh is).
   */
  readonly ordinary: (data: Buffer) => boolean;
  /** The ordinary REGISTER handler, counted while in flight. */
  wrap(handler: RequestHandler): RequestHandler;
  readonly shedder: RegisterShedder;
  /** Receive-queue reads so far. */
  readonly queueReads: number;
  close(): void;
}

export interface RegisterAdmissionOptions {
  readonly flows: DeviceFlows;
  readonly log: Logger;
  /** The SIP UDP port, whose receive queue is the main signal. */
  readonly sipPort: number;
  /** Its socket's inode when the port is shared with other instances (ShedSamplerOptions.sipSocketInode). */
  readonly sipSocketInode?: string | undefined;
  /** Its queueing delay where its queue cannot be read (ShedSamplerOptions.queueDelay). */
  readonly queueDelay?: () => number | null;
  readonly random?: () => number;
  /** The shedder's marks (vms.limits.register-shed-*); default DEFAULT_SHED_POLICY. */
  readonly policy?: ShedPolicy;
  /** The stateless 401 of a first leg, tried when the REGISTER is not shed; absent: every REGISTER not shed goes on. */
  readonly challenge?: StatelessChallenge;
  /** Resizes the SIP UDP socket's receive buffer: to the policy's shedding size at the cap, back to `receiveBufferBytes` after. */
  readonly setReceiveBuffer?: (bytes: number) => void;
  /** The socket's ordinary receive buffer, restored when shedding stops. */
  readonly receiveBufferBytes?: number;
  /** Reads the receive queue of the socket on a port (default: /proc/net/udp and udp6); for tests. */
  readonly readReceiveQueue?: (port: number) => number | null;
}

export function createRegisterAdmission(o: RegisterAdmissionOptions): RegisterAdmission {
  let pending = 0;
  const sampler = createShedSampler({
    log: o.log,
    sipPort: o.sipPort,
    sipSocketInode: o.sipSocketInode,
    ...(o.queueDelay === undefined ? {} : { queueDelay: o.queueDelay }),
    pending: () => pending,
    ...(o.policy === undefined ? {} : { policy: o.policy }),
    ...(o.setReceiveBuffer === undefined ? {} : { setReceiveBuffer: o.setReceiveBuffer }),
    ...(o.receiveBufferBytes === undefined ? {} : { receiveBufferBytes: o.receiveBufferBytes }),
    ...(o.readReceiveQueue === undefined ? {} : { readReceiveQueue: o.readReceiveQueue }),
  });
  const shedder = sampler.shedder;
  const random = o.random ?? Math.random;

  /** 503 + Retry-After for a new registration while shedding, else undefined. */
  const shed = (req: StatelessRequest): StatelessAnswer | undefined => {
    if (req.hasHeader('Authorization')) return undefined; // answers our challenge: finish it
    const deviceId = fromUser(req.from);
    if (deviceId !== undefined && o.flows.get(deviceId) !== undefined) return undefined; // refresh keeps it online
    // asked for first REGISTERs only: the ones it lets through count in the admitted rate whose peak sizes Retry-After
    if (!shedder.shouldShed(random())) return undefined;
    // the earliest second in which the shedder has room for it (its return calendar), booked there
    return { status: SipStatus.ServiceUnavailable, headers: [['Retry-After', String(shedder.retryAfterSec(random()))]] };
  };
  const challenge = o.challenge;
  const stateless: StatelessHandler = (req): StatelessAnswer | undefined => {
    sampler.arrived(); // a request taking the parsed path after the shortcut passed it is counted twice: a rough signal is enough
    // shedding first: a 503 costs less than a challenge (a keyed hash), and a shed device comes back later
    const answer = shedder.fraction === 0 ? undefined : shed(req);
    return answer ?? challenge?.(req);
  };

  return {
    stateless,
    ordinary: answersChallenge,
    shedder,
    get queueReads() {
      return sampler.queueReads;
    },
    wrap: (handler) => async (req, ctx) => {
      pending++;
      try {
        await handler(req, ctx);
      } finally {
        pending--;
      }
    },
    close: () => sampler.close(),
  };
}
