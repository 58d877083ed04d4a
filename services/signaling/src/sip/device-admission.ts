// What one device may make this instance do (SPEC SEC-3), decided before its MESSAGE is answered:
//  - a token bucket per registered device: each MESSAGE costs one token plus one per full 4 KiB of
//    body, so sixty 64 KB catalogs cost like a thousand keepalives; an empty bucket is answered
//    503 with Retry-After (RFC 3261 §21.5.4: overloaded, try later; the device is not refused);
//  - the per-device channel cap for catalog reports: a Catalog Response or Notify that would take the
//    device over it is answered 403 (RFC 3261 §21.4.4: understood, refused, repeating will not help).
// The stores enforce the cap again atomically (ChannelLimitError), so racing messages cannot pass it.
// The same makes the check here an early refusal only: when the store cannot answer it (StorageError:
// MySQL past its statement deadline, or refused while it is suspect), the message is admitted and the
// write decides. Refusing it instead answered the device's catalog 503, which devices do not send again: a
// one-off database hiccup lost a whole catalog answer (SPEC FAIL-4: SIP keeps being answered).
// Refusals are logged at most once per device per LOG_EVERY_MS with the count since the last line.
import { BlockList, isIP } from 'node:net';
import type { CatalogItem, ManscdpCommand } from '@vms/gb28181';
import type { Logger } from 'pino';
import { DEFAULT_MAX_CHANNELS_PER_DEVICE, type DeviceRepository } from '../devices/device-repository.port.ts';
import { ChannelLimitError, RateLimitedError, StorageError, type VmsError } from '../errors/catalog.ts';
import type { DeviceFlows, DeviceSession, RateHolder } from './device-flows.ts';

export interface DeviceLimits {
  /** Channels one device may hold. */
  readonly maxChannelsPerDevice: number;
  /** Tokens added per second to a device's bucket. */
  readonly messageRatePerSec: number;
  /** Bucket size: the burst a device may send at once. */
  readonly messageBurst: number;
  /** SIP edges: behind one, unregistered senders are told apart by the device flow the edge names. */
  readonly edgeAddresses: readonly string[];
  /** Per source address: messages per second naming no device registered here on that flow. */
  readonly unboundRatePerSec: number;
  /** Per source address: the burst of such messages. */
  readonly unboundBurst: number;
  /** Worker threads decoding bodies over LANE_ABOVE_BYTES (manscdp-parse-pool.ts). */
  readonly largeBodyDecodeThreads: number;
  /** Large bodies waiting for a decode thread; more are answered 503 + Retry-After. */
  readonly largeBodyDecodeQueue: number;
}

/**
 * Defaults well above a legitimate device: a keepalive a minute, a catalog of thousands of channels
 * at a few items per MESSAGE (4,000 messages at once, then 200 a second), and far below what stalls
 * an instance (measured: 150 unsolicited 64 KB catalogs in a burst; now 230 of them at most, then
 * twelve a second).
 */
export const DEFAULT_DEVICE_LIMITS: DeviceLimits = Object.freeze({
  maxChannelsPerDevice: DEFAULT_MAX_CHANNELS_PER_DEVICE,
  messageRatePerSec: 200,
  messageBurst: 4000,
  edgeAddresses: [],
  unboundRatePerSec: 50,
  unboundBurst: 500,
  largeBodyDecodeThreads: 1,
  largeBodyDecodeQueue: 64,
});

/** Tokens one MESSAGE costs: one, plus one per full 4 KiB of body (parsing is per byte). */
export const messageCost = (bodyBytes: number): number => 1 + Math.floor(bodyBytes / 4096);

const LOG_EVERY_MS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets keyed by source address, for requests that speak for no device registered here (SPEC
 * SEC-3): each costs a store read (is it registered elsewhere?) and a challenge, and the ids in them are
 * free to invent, so the per-device bucket cannot hold them. At most `maxAddresses` are remembered: past
 * that the least recently refilled is forgotten (it comes back with a full bucket, which only errs on the
 * side of the sender; spoofed UDP sources cannot grow the map).
 */
export function createAddressBuckets(ratePerSec: number, burst: number, maxAddresses = 65_536) {
  const buckets = new Map<string, Bucket>();
  return {
    /** Takes `cost` tokens from `address`'s bucket if there are that many; false (nothing taken) otherwise. */
    take(address: string, cost: number, now: number): boolean {
      let b = buckets.get(address);
      if (b === undefined) {
        if (buckets.size >= maxAddresses) buckets.delete(buckets.keys().next().value as string);
        b = { tokens: burst, at: now };
      } else {
        buckets.delete(address); // re-inserted below: the map's order is the order of last use
        if (now > b.at) {
          b.tokens = Math.min(burst, b.tokens + ((now - b.at) * ratePerSec) / 1000);
          b.at = now;
        }
      }
      buckets.set(address, b);
      if (b.tokens < cost) return false;
      b.tokens -= cost;
      return true;
    },
    get size() {
      return buckets.size;
    },
  };
}

/** Whether an address is one of `entries` (addresses or CIDR blocks, as parseAddressList accepts them). */
export function addressMatcher(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const e of entries) {
    const [ip = '', bits] = e.split('/');
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

export interface DeviceAdmission {
  /** The rate limit alone (sync, for the keepalive shortcut): true = may go on. */
  allow(session: DeviceSession, bodyBytes: number, now: number): boolean;
  /**
   * The rate limit for a MESSAGE from `deviceId` (its From user), before its body is parsed: parsing
   * is what costs. A device with no live registration here is not charged (it gets 404 further on).
   * The error to answer with, or undefined to go on. Logs refusals.
   */
  charge(deviceId: string | null | undefined, bodyBytes: number, now: number, log: Logger): VmsError | undefined;
  /** The channel cap for a decoded catalog MESSAGE: the error to answer with, or undefined. Logs refusals. */
  admit(session: DeviceSession, cmd: ManscdpCommand, now: number, log: Logger): Promise<VmsError | undefined>;
}

/**
 * Bodies above this are decoded on a worker thread (manscdp-parse-pool.ts), not on the event loop: a
 * decode costs ~0.4 ms of CPU per KiB, so a body this size costs ~1.5 ms here, and a 64 KiB one would
 * block the loop for 12–30 ms (SPEC SEC-3: at most 50 ms per input, whatever arrives together).
 */
export const LANE_ABOVE_BYTES = 4096;

/** Ids a catalog message would store (ADD/UPDATE/ON/OFF…; DEL removes). */
function catalogIds(cmd: ManscdpCommand): readonly string[] | undefined {
  if (cmd.kind === 'Response/Catalog') return cmd.body.items.map((i: CatalogItem) => i.deviceId);
  if (cmd.kind === 'Notify/Catalog') return cmd.body.items.filter((i: CatalogItem) => i.event !== 'DEL').map((i: CatalogItem) => i.deviceId);
  return undefined;
}

/**
 * Pure per-device token buckets, time passed in, each kept on its holder (a DeviceSession: forgotten with
 * it) rather than in a WeakMap by it: no keyed lookup per keepalive (a wall-clock profile put the WeakMap's
 * at 1.5 % of the keepalive server's samples, docs/benchmarks.md). A holder with `rateAt` < 0 is new: full.
 */
export function createHeldBuckets(ratePerSec: number, burst: number) {
  return {
    /** Takes `cost` tokens if there are that many; false (nothing taken) otherwise. */
    take(h: RateHolder, cost: number, now: number): boolean {
      if (h.rateAt < 0) {
        h.rateTokens = burst;
        h.rateAt = now;
      } else if (now > h.rateAt) {
        h.rateTokens = Math.min(burst, h.rateTokens + ((now - h.rateAt) * ratePerSec) / 1000);
        h.rateAt = now;
      }
      if (h.rateTokens < cost) return false;
      h.rateTokens -= cost;
      return true;
    },
  };
}

export function createDeviceAdmission(
  devices: Pick<DeviceRepository, 'getDevice' | 'getChannels'>,
  flows: Pick<DeviceFlows, 'get'>,
  limits: DeviceLimits,
): DeviceAdmission {
  const buckets = createHeldBuckets(limits.messageRatePerSec, limits.messageBurst);
  const refusals = new WeakMap<DeviceSession, { lastLog: number; since: number }>();

  const logRefusal = (session: DeviceSession, err: VmsError, now: number, log: Logger): void => {
    let r = refusals.get(session);
    if (r === undefined) refusals.set(session, (r = { lastLog: -Infinity, since: 0 }));
    r.since++;
    if (now - r.lastLog < LOG_EVERY_MS) return;
    log.warn({ deviceId: session.deviceId, code: err.code, refusedSinceLastLog: r.since }, 'device message refused over a bound');
    r.lastLog = now;
    r.since = 0;
  };

  const overCap = async (deviceId: string, ids: readonly string[]): Promise<boolean> => {
    const unique = [...new Set(ids)];
    const count = (await devices.getDevice(deviceId))?.channelCount ?? 0;
    if (count + unique.length <= limits.maxChannelsPerDevice) return false;
    const known = await devices.getChannels(deviceId, unique); // only the ids named: costs the message
    return count + unique.length - known.length > limits.maxChannelsPerDevice;
  };

  return {
    allow: (session, bodyBytes, now) => buckets.take(session, messageCost(bodyBytes), now),

    charge(deviceId, bodyBytes, now, log) {
      const session = deviceId === undefined || deviceId === null ? undefined : flows.get(deviceId);
      if (session === undefined || buckets.take(session, messageCost(bodyBytes), now)) return undefined;
      const refusal = new RateLimitedError(session.deviceId);
      logRefusal(session, refusal, now, log);
      return refusal;
    },

    async admit(session, cmd, now, log) {
      const ids = catalogIds(cmd);
      if (ids === undefined || ids.length === 0) return undefined;
      try {
        if (!(await overCap(session.deviceId, ids))) return undefined;
      } catch (err) {
        if (!(err instanceof StorageError)) throw err;
        log.warn({ err, deviceId: session.deviceId }, 'channel cap not checked before the answer (store unavailable): the write checks it');
        return undefined;
      }
      const refusal = new ChannelLimitError(session.deviceId, limits.maxChannelsPerDevice);
      logRefusal(session, refusal, now, log);
      return refusal;
    },
  };
}
