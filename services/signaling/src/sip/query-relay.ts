// An upstream's Query about one of our devices, relayed by the device's owner (GB/T 28181-2016 §9.5: the
// Response goes back to the asker). The query goes to the device with an SN of ours — the upstream's SN may
// collide with one of our own waits, and a device answers only the SN it was asked — and every Response page
// that comes back is handed on with the upstream's SN, until the answer is complete (SumNum) or its wait ends.
// A device that does not answer produces nothing: the upstream's own timeout applies, and nothing is kept
// here past the wait (the same PendingQueries deadlines as our own queries).
import { parseManscdp } from '@vms/gb28181';
import type { DeviceId } from '../devices/device.types.ts';
import { BadParameterError } from '../errors/catalog.ts';
import type { DeviceSession } from './device-flows.ts';
import type { Assembly, PendingQueries, PendingSpec } from './pending-queries.ts';
import type { QueryTimeouts } from './query-timeouts.ts';
import { toCatalogError } from './sip-status.ts';

/** A decoded Response body (MANSCDP codec field names) with the upstream's SN. */
export type RelayedResponse = { readonly sn: string } & Readonly<Record<string, unknown>>;

export interface RelayOutcome {
  /** Response MESSAGEs handed on. */
  readonly pages: number;
  /** False when the wait ended before SumNum items came (or before any Response). */
  readonly complete: boolean;
}

export interface QueryRelayDeps {
  readonly pending: PendingQueries;
  readonly timeouts: QueryTimeouts;
  readonly sessionOf: (deviceId: DeviceId) => DeviceSession;
  readonly send: (session: DeviceSession, targetId: string, body: Buffer, operation: string) => Promise<void>;
}

/** Paged answers (several MESSAGEs, SumNum) and their waits; the rest answer in one MESSAGE. */
const PAGED = new Set(['Catalog', 'RecordInfo']);

function waitsFor(cmdType: string, t: QueryTimeouts): Pick<PendingSpec<unknown, unknown>, 'firstTimeoutMs' | 'nextTimeoutMs' | 'maxTotalMs'> {
  switch (cmdType) {
    case 'Catalog':
      return { firstTimeoutMs: t.catalogFirstMs, nextTimeoutMs: t.catalogNextMs, maxTotalMs: t.catalogMaxMs };
    case 'RecordInfo':
      return { firstTimeoutMs: t.recordFirstMs, nextTimeoutMs: t.recordNextMs, maxTotalMs: t.recordMaxMs };
    case 'DeviceStatus':
      return { firstTimeoutMs: t.deviceStatusMs };
    default:
      return { firstTimeoutMs: t.deviceInfoMs };
  }
}

/** Hands each page on as it comes; complete at SumNum items for paged answers, at the first for the rest. */
function relayAssembly(cmdType: string, upstreamSn: string, onResponse: (r: RelayedResponse) => void): Assembly<Record<string, unknown>, RelayOutcome> {
  let pages = 0;
  let items = 0;
  let complete = false;
  return {
    add(body) {
      pages++;
      onResponse({ ...body, sn: upstreamSn });
      if (!PAGED.has(cmdType)) return (complete = true);
      items += Array.isArray(body['items']) ? body['items'].length : 0;
      const sumNum = typeof body['sumNum'] === 'number' ? body['sumNum'] : items;
      return (complete = items >= sumNum);
    },
    partial: () => ({ pages, complete }),
    result: () => ({ pages, complete }),
  };
}

/** The SN element of a MANSCDP body, rewritten byte for byte (the rest of the body, GB2312 included, untouched). */
export function withSn(body: Buffer, sn: string): Buffer {
  const text = body.toString('latin1');
  const next = text.replace(/<SN>\s*[^<]*<\/SN>/i, `<SN>${sn}</SN>`);
  if (next === text && !/<SN>/i.test(text)) throw new BadParameterError('SN', 'the query has none');
  return Buffer.from(next, 'latin1');
}

export interface QueryRelay {
  /**
   * Sends `query` (the upstream's MESSAGE body) to `deviceId` and calls `onResponse` for every Response
   * page. Resolves when the answer is complete or its wait ended; rejects when the query could not be
   * sent (device offline here, SIP failure) or is not a Query of one of `relayedTypes`.
   */
  relay(deviceId: DeviceId, query: Buffer, relayedTypes: ReadonlySet<string>, onResponse: (cmdType: string, r: RelayedResponse) => void): Promise<RelayOutcome>;
}

export function createQueryRelay(d: QueryRelayDeps): QueryRelay {
  return {
    async relay(deviceId, query, relayedTypes, onResponse) {
      const msg = parseManscdp(query);
      if (msg.root !== 'Query' || !relayedTypes.has(msg.cmdType)) throw new BadParameterError('CmdType', `${msg.root}/${msg.cmdType} is not a relayed query`);
      const session = d.sessionOf(deviceId);
      const cmdType = msg.cmdType;
      const spec: PendingSpec<Record<string, unknown>, RelayOutcome> = {
        deviceId,
        cmdType,
        operation: `upstream ${cmdType} query`,
        ...waitsFor(cmdType, d.timeouts),
        assembly: relayAssembly(cmdType, msg.sn, (r) => onResponse(cmdType, r)),
      };
      const handle = d.pending.open(spec);
      try {
        await d.send(session, msg.deviceId, withSn(query, String(handle.sn)), spec.operation);
      } catch (err) {
        d.pending.fail(handle.sn, toCatalogError(err));
        throw err;
      }
      return handle.result.catch(() => ({ pages: 0, complete: false }));
    },
  };
}
