// One SIP edge (issue 14): SipTransport (UDP + TCP on one port) → forward.ts decision → send. Stateless:
// nothing is kept per device, dialog or transaction; a restart loses only the datagrams in flight. Several
// edges behind one address work when they share the flow secret.
import { compilePlacementRules, type PlacementRule } from '@vms/routing';
import { systemClock, type Clock } from '@vms/clock';
import { buildDatagramResponse, createResponse, getTopVia, peekDatagramRequest, SipStatus, SipTransport, stampDatagramVia, type Flow, type ShedPolicy, type SipLogger, type SipMessage, type SipRequest, type TransportName } from '@vms/sip';
import { EdgeCounters, type ShedBound } from './counters.ts';
import { forwardDeviceDatagram, forwardShardResponse, isResponseDatagram, readDeviceDatagram } from './datagram-forward.ts';
import { FlowDevices } from './flow-devices.ts';
import { FlowCodec, type DeviceFlowRef } from './flow-token.ts';
import { createEdgeOverload, type EdgeOverload, type EdgeOverloadOptions } from './overload.ts';
import { FLOW_PARAM, forwardRequest, forwardResponse, SHARD_PARAM, type ForwardAction, type ForwardContext } from './forward.ts';
import { AddressBuckets, TokenBucket } from './rate-limit.ts';
import type { ShardSource } from './shard-source.ts';
import { ShardLinks, type ShardLinkOptions } from './shard-links.ts';

export interface EdgeOptions {
  readonly code: string;
  /** Listen address. */
  readonly bindHost: string;
  /** Address written in Via/Path (what shards and devices reach). */
  readonly host: string;
  /** 0 = any free port. */
  readonly port: number;
  readonly transports?: readonly TransportName[];
  /** Shared by every edge behind one address (at least 16 bytes). */
  readonly flowSecret: Buffer;
  readonly rules?: readonly PlacementRule[];
  readonly shards: ShardSource;
  /** Requests per second the edge takes in; past it 503. Default 20,000. */
  readonly maxRequestsPerSec?: number;
  /** Requests per second from one source address; past it 503. Default 200 (burst 2×). */
  readonly perAddressRequestsPerSec?: number;
  /** Source addresses remembered for the per-address bound. Default 100,000. */
  readonly maxAddresses?: number;
  /** Flows whose device is remembered, to place a device's INVITE (flow-devices.ts). Default 100,000. */
  readonly maxFlowDevices?: number;
  /** How the edge reaches shards: UDP (default) or its own TCP connections (shard-links.ts). */
  readonly shardTransport?: 'udp' | 'tcp';
  /** Bounds of the TCP links (connections per shard, queue, backoff). */
  readonly shardLinks?: Omit<ShardLinkOptions, 'wanted' | 'clock' | 'log'>;
  readonly log: SipLogger;
  readonly now?: () => number;
  /** Timers of the TCP links' reconnects. */
  readonly clock?: Clock;
  /** Marks of the overload control (overload.ts: new REGISTERs 503 while behind); default the shards' DEFAULT_SHED_POLICY. */
  readonly shedPolicy?: ShedPolicy;
  /** The overload sampler's signals and randomness, for tests. */
  readonly overloadProbe?: Pick<EdgeOverloadOptions, 'readReceiveQueue' | 'utilization' | 'random'>;
}

export interface EdgeStats {
  toShard: number;
  toDevice: number;
  toVia: number;
  replied: number;
  shed: number;
  dropped: number;
  sendErrors: number;
}

export interface SipEdge {
  readonly port: number;
  stats(): Readonly<EdgeStats>;
  /** The live counters (metrics.ts reads them at scrape time). */
  readonly counters: EdgeCounters;
  /** The shards as this edge last read them. */
  readonly shards: ShardSource;
  /** The TCP links to shards (`shardTransport: 'tcp'`), else null. */
  readonly links: ShardLinks | null;
  /** The overload control: its shedder's share (metrics.ts reads it). */
  readonly overload: Pick<EdgeOverload, 'shedder'>;
  close(): Promise<void>;
}

export const DEFAULT_MAX_REQUESTS_PER_SEC = 20_000;
export const DEFAULT_PER_ADDRESS_REQUESTS_PER_SEC = 200;
export const DEFAULT_MAX_ADDRESSES = 100_000;
const SHED_RETRY_AFTER_S = '5';
/**
 * Every device's datagrams arrive on this one socket: the OS default (~208 KiB, ~400 keepalives) is gone
 * in one scheduling gap of a busy host, and what does not fit is dropped before the ceiling can answer
 * 503. 4 MiB as the shards use (signaling sip-server.ts; capped by net.core.rmem_max).
 */
export const UDP_RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;
const SHED_HEADERS: readonly [string, string][] = [['Retry-After', SHED_RETRY_AFTER_S]];

/**
 * Whether the top Route sends the request towards a device (a shard's request: Path, or the shard's side of
 * a double Record-Route), read without parsing: `vms-f` before any `vms-s` (a device's in-dialog request has
 * `vms-s` on top, the device's own entry below it).
 */
function towardsDevice(route: string | undefined): boolean {
  if (route === undefined) return false;
  const f = route.indexOf(`${FLOW_PARAM}=`);
  if (f < 0) return false;
  const s = route.indexOf(`${SHARD_PARAM}=`);
  return s < 0 || f < s;
}

export async function startEdge(o: EdgeOptions): Promise<SipEdge> {
  const now = o.now ?? Date.now;
  const transport = await SipTransport.listen({ host: o.bindHost, port: o.port, transports: o.transports ?? ['udp', 'tcp'], logger: o.log, udpReceiveBufferBytes: UDP_RECEIVE_BUFFER_BYTES });
  const devices = new FlowDevices(o.maxFlowDevices);
  const ctx: ForwardContext = {
    self: { code: o.code, host: o.host, port: transport.port },
    codec: new FlowCodec(o.flowSecret),
    policy: compilePlacementRules(o.rules ?? []),
    shards: () => o.shards.current(),
    devices,
    shardTransport: o.shardTransport ?? 'udp',
  };
  const links =
    o.shardTransport === 'tcp'
      ? new ShardLinks(
          {
            open: (host, port, onClose) => transport.openTcp(host, port, onClose),
            write: async (flow, msg) => {
              await transport.send(msg, flow, undefined, { once: true, connectionOnly: true });
            },
          },
          {
            ...o.shardLinks,
            // keep reconnecting to a shard the node table says is online; a dead one is dialled again by its next message
            wanted: (host, port) => o.shards.current().some((sh) => sh.online && sh.sipHost === host && sh.sipPort === port),
            clock: o.clock ?? systemClock,
            log: o.log,
          },
        )
      : null;
  const global = new TokenBucket(o.maxRequestsPerSec ?? DEFAULT_MAX_REQUESTS_PER_SEC, o.maxRequestsPerSec ?? DEFAULT_MAX_REQUESTS_PER_SEC, now());
  const perRate = o.perAddressRequestsPerSec ?? DEFAULT_PER_ADDRESS_REQUESTS_PER_SEC;
  const perAddress = new AddressBuckets(perRate, perRate * 2, o.maxAddresses ?? DEFAULT_MAX_ADDRESSES);
  // new REGISTERs answered 503 while the socket is behind, decided from the bytes (overload.ts)
  const overload = createEdgeOverload({
    log: o.log,
    sipPort: transport.port,
    devices,
    setReceiveBuffer: (bytes) => transport.setUdpReceiveBuffer(bytes),
    receiveBufferBytes: UDP_RECEIVE_BUFFER_BYTES,
    ...(o.shedPolicy === undefined ? {} : { policy: o.shedPolicy }),
    ...o.overloadProbe,
  });
  const stats: EdgeStats = { toShard: 0, toDevice: 0, toVia: 0, replied: 0, shed: 0, dropped: 0, sendErrors: 0 };
  const counters = new EdgeCounters();

  const sendFailed = (err: unknown): void => {
    stats.sendErrors++;
    counters.sendErrors++;
    o.log.debug({ err }, 'edge send failed');
  };
  const deviceTarget = (ref: DeviceFlowRef): Flow =>
    ref.transport === 'tcp' && ref.edge === o.code && ref.connectionId !== undefined
      ? { transport: 'tcp', remoteAddress: ref.address, remotePort: ref.port, localAddress: o.host, localPort: transport.port, connectionId: ref.connectionId }
      : { transport: ref.transport, remoteAddress: ref.address, remotePort: ref.port, localAddress: o.host, localPort: transport.port };

  const reply = (req: SipRequest, flow: Flow, status: number, headers?: readonly [string, string][]): void => {
    stats.replied++;
    const res = createResponse(req, status, undefined, headers === undefined ? {} : { headers });
    transport.sendResponse(res, flow, { once: true }).catch(sendFailed);
  };

  /**
   * To a shard over the TCP links, pinned by the device's flow (the shard binds the device to one
   * connection, SEC-1); false when that shard's bound is full: a request is answered 503 + Retry-After.
   */
  const viaLinks = (l: ShardLinks, host: string, port: number, msg: SipMessage, flow: Flow): boolean => {
    if (l.send(host, port, FlowDevices.key(flow), msg)) return true;
    stats.shed++;
    counters.shedBy('shard_link');
    if (msg.type === 'request' && msg.method !== 'ACK') reply(msg, flow, SipStatus.ServiceUnavailable, SHED_HEADERS);
    return false;
  };

  const act = (action: ForwardAction, msg: SipMessage, flow: Flow): void => {
    switch (action.kind) {
      case 'to-shard':
        if (links !== null && !viaLinks(links, action.shard.sipHost, action.shard.sipPort, action.msg, flow)) return;
        stats.toShard++;
        counters.placed++;
        counters.request(0, action.msg.method);
        if (links === null) transport.send(action.msg, { transport: 'udp', host: action.shard.sipHost, port: action.shard.sipPort }, undefined, { once: true }).catch(sendFailed);
        return;
      case 'to-shard-flow':
        if (action.ref.transport === 'tcp' && links !== null) {
          if (!viaLinks(links, action.ref.address, action.ref.port, action.msg, flow)) return;
        } else transport.send(action.msg, { transport: 'udp', host: action.ref.address, port: action.ref.port }, undefined, { once: true }).catch(sendFailed);
        stats.toShard++;
        counters.request(0, action.msg.method);
        return;
      case 'to-device': {
        stats.toDevice++;
        if (action.msg.type === 'response') counters.response(1);
        else counters.request(1, action.msg.method);
        const target = deviceTarget(action.ref);
        const send = action.msg.type === 'response' ? transport.sendResponse(action.msg, target, { once: true }) : transport.send(action.msg, target, undefined, { once: true });
        send.catch(sendFailed);
        return;
      }
      case 'to-via': {
        // the answer to a shard's request: over TCP back on the links to the shard's listening address
        const next = getTopVia(action.msg);
        if (links !== null && next.transport.toUpperCase() === 'TCP') {
          if (!viaLinks(links, next.params.get('received') ?? next.host, next.port ?? 5060, action.msg, flow)) return;
        } else transport.sendResponse(action.msg, { ...flow, transport: 'udp' }, { once: true }).catch(sendFailed);
        stats.toVia++;
        counters.response(0);
        return;
      }
      case 'reply':
        counters.refuse(action.refusal);
        if (msg.type === 'request') reply(msg, flow, action.status, action.headers);
        return;
      case 'drop':
        stats.dropped++;
        counters.dropped++;
        if (action.refusal !== undefined) counters.refuse(action.refusal);
        return;
    }
  };

  /** Admission (the ceiling, then the per-address bound): one charge per request; the bound hit, or null. */
  const admit = (flow: Flow, fromShard: boolean): ShedBound | null => {
    const t = now();
    if (!global.take(t)) return 'global';
    return fromShard || perAddress.take(flow.remoteAddress, t) ? null : 'address';
  };
  /**
   * A datagram the byte path admitted or refused but left to the parsed path (its shape): the verdict,
   * keyed by the flow object the transport hands to both for the same datagram, so it is not charged twice.
   */
  let judged: { flow: Flow; admitted: boolean } | undefined;

  // The hot path (datagram-forward.ts): keepalives and their answers forwarded from the bytes.
  transport.onDatagramShortcut = (data, flow) => {
    judged = undefined;
    if (isResponseDatagram(data)) {
      const out = forwardShardResponse(data, ctx);
      if (out !== undefined) {
        stats.toDevice++;
        counters.response(1);
      }
      return out;
    }
    const shed = overload.shed(data, flow);
    if (shed !== undefined) {
      stats.shed++;
      stats.replied++;
      counters.shedBy('overload');
      return shed;
    }
    if (links !== null) return undefined; // shards over TCP: the parsed path sends on the links
    const request = readDeviceDatagram(data);
    if (request === undefined) return undefined; // the parsed path admits (or not) and decides
    const refused = admit(flow, false);
    if (refused !== null) {
      stats.shed++;
      counters.shedBy(refused);
      // the 503 from the bytes too (the stack's stateless answer), so shedding stays cheaper than forwarding
      const peeked = peekDatagramRequest(data);
      const via = peeked === undefined || peeked.method === 'ACK' ? undefined : stampDatagramVia(peeked, flow, false);
      if (peeked === undefined || via === undefined) {
        judged = { flow, admitted: false };
        return undefined;
      }
      stats.replied++;
      return { data: buildDatagramResponse(peeked, via, SipStatus.ServiceUnavailable, undefined, SHED_HEADERS), host: via.host, port: via.port };
    }
    const out = forwardDeviceDatagram(request, flow, ctx);
    if (out === undefined) judged = { flow, admitted: true };
    else {
      stats.toShard++;
      counters.placed++;
      counters.request(0, request.method);
      devices.learn(flow, request.deviceId);
    }
    return out;
  };

  transport.onMessage = (msg, flow) => {
    try {
      if (msg.type === 'response') {
        act(forwardResponse(msg, ctx), msg, flow);
        return;
      }
      const verdict = judged !== undefined && judged.flow === flow ? judged.admitted : undefined;
      judged = undefined;
      if (verdict === false) {
        if (msg.method !== 'ACK') reply(msg, flow, SipStatus.ServiceUnavailable, [['Retry-After', SHED_RETRY_AFTER_S]]);
        return;
      }
      // Requests to devices come from shards through a signed Route: not charged to the shard's address.
      const fromShard = towardsDevice(msg.headers.get('Route'));
      const refused = verdict === undefined ? admit(flow, fromShard) : null;
      if (refused !== null) {
        stats.shed++;
        counters.shedBy(refused);
        if (msg.method !== 'ACK') reply(msg, flow, SipStatus.ServiceUnavailable, [['Retry-After', SHED_RETRY_AFTER_S]]);
        return;
      }
      act(forwardRequest(msg, flow, ctx), msg, flow);
    } catch (err) {
      // hostile input the transport let through (a header a forward needs does not parse): never thrown
      stats.dropped++;
      counters.dropped++;
      o.log.debug({ err }, 'edge message dropped');
    }
  };
  o.log.info({ port: transport.port, host: o.host, code: o.code }, 'sip edge listening');

  let closing: Promise<void> | null = null;
  return {
    port: transport.port,
    stats: () => ({ ...stats }),
    counters,
    shards: o.shards,
    links,
    overload,
    close() {
      closing ??= (async () => {
        overload.close();
        o.shards.close();
        links?.close();
        await transport.close();
      })();
      return closing;
    },
  };
}
