// The devices registered on this instance (runtime state, never persisted: SPEC OWN-1): device id →
// the flow its last request came on, which is where every request to it goes (NAT: the same socket,
// the same source port), the charset of its bodies, the registration's lifetime, and this instance's
// view of its online flag (so the keepalive hot path needs no store read).
import type { KeepaliveShape } from '@vms/gb28181';
import type { Flow } from '@vms/sip';
import type { Charset, DeviceId, Transport } from '../devices/device.types.ts';
import type { GbVersion } from './gb-version.ts';
import { UdpFlowIndex } from './udp-flow-index.ts';

/** Where a holder keeps its own rate bucket (device-admission.ts createHeldBuckets). */
export interface RateHolder {
  /** Tokens left at `rateAt`. */
  rateTokens: number;
  /** When the bucket was last refilled; negative: never charged (full). A new session: a new full bucket. */
  rateAt: number;
}

export interface DeviceSession extends RateHolder {
  readonly deviceId: DeviceId;
  /** Last flow a request of the device arrived on. */
  flow: Flow;
  charset: Charset;
  /** Revision the device speaks, from its last REGISTER (gb-version.ts). */
  gbVersion: GbVersion;
  registeredAt: number;
  /** Epoch ms after which the registration is void unless refreshed. */
  expiresAt: number;
  /** Mirror of the store's online flag as this instance last set or saw it. */
  online: boolean;
  /**
   * Issue 14: registered through a SIP edge — the device flow the edge named in its Via (`vms-f`), part of
   * the SEC-1 binding (`flow` is then the edge's), else null.
   */
  edgeFlow: string | null;
  /** The REGISTER's Path (RFC 3327 §5): requests to the device carry it as Route, through the edge. */
  path: string | null;
  /**
   * The shape of this device's keepalive bodies (@vms/gb28181 keepaliveShapeOf), once the keepalive
   * shortcut has read one: its next keepalives are checked against it instead of scanned. Null before;
   * false when its first body had none (not the usual shape): not tried again for this registration.
   */
  keepaliveShape: KeepaliveShape | null | false;
  /**
   * The start of the From of a keepalive of this device that passed fromUserIs, through the URI's `>`
   * (message.handler.ts fromPrefixOf): a next From starting with it names this device. Null before the
   * first keepalive found by its flow; false when such a From had none (a bare URI): not tried again
   * for this registration.
   */
  fromPrefix: string | null | false;
}

export type SessionInput = Omit<DeviceSession, 'online' | 'edgeFlow' | 'path' | 'keepaliveShape' | 'fromPrefix' | keyof RateHolder> & { readonly edgeFlow?: string | null; readonly path?: string | null };

export interface DeviceFlows {
  /** A successful REGISTER: creates or replaces the session (online). */
  register(session: SessionInput): DeviceSession;
  get(deviceId: DeviceId): DeviceSession | undefined;
  /**
   * The session registered from this UDP flow when it is the only one (udp-flow-index.ts); undefined when
   * none or several share it. A hint for the keepalive shortcut: the caller still checks id and flow.
   */
  soleOnFlow(flow: Flow): DeviceSession | undefined;
  /** Unregister, expiry, ownership moved. Returns whether a session existed. */
  forget(deviceId: DeviceId): boolean;
  /** Registrations whose lifetime ended before `now` (the caller forgets them). */
  expired(now: number): DeviceId[];
  /** Devices this instance holds and believes online (its mirror), for re-assertion after a scan. */
  onlineIds(): DeviceId[];
  readonly size: number;
}

export const transportOf = (flow: Flow): Transport => (flow.transport === 'tcp' ? 'TCP' : 'UDP');

export function createDeviceFlows(): DeviceFlows {
  const sessions = new Map<DeviceId, DeviceSession>();
  const byFlow = new UdpFlowIndex<DeviceSession>();
  return {
    register(s) {
      // One literal, not `{ ...s, online: true }`: V8 gives spread copies their own map once the spread
      // site turns megamorphic, and ten thousand session maps made every keepalive's session reads
      // megamorphic misses (several µs per keepalive). Fields are listed, so all sessions share one map.
      const session: DeviceSession = {
        deviceId: s.deviceId,
        flow: s.flow,
        charset: s.charset,
        gbVersion: s.gbVersion,
        registeredAt: s.registeredAt,
        expiresAt: s.expiresAt,
        online: true,
        edgeFlow: s.edgeFlow ?? null,
        path: s.path ?? null,
        keepaliveShape: null,
        fromPrefix: null,
        rateTokens: 0, // SPEC SEC-3 message bucket (device-admission.ts): full at the first message
        rateAt: -1,
      };
      const replaced = sessions.get(s.deviceId);
      if (replaced !== undefined) byFlow.remove(replaced);
      sessions.set(s.deviceId, session);
      byFlow.add(session);
      return session;
    },
    get: (deviceId) => sessions.get(deviceId),
    soleOnFlow: (flow) => byFlow.sole(flow),
    forget(deviceId) {
      const s = sessions.get(deviceId);
      if (s === undefined) return false;
      byFlow.remove(s);
      return sessions.delete(deviceId);
    },
    expired(now) {
      const out: DeviceId[] = [];
      for (const s of sessions.values()) if (s.expiresAt <= now) out.push(s.deviceId);
      return out;
    },
    onlineIds() {
      const out: DeviceId[] = [];
      for (const s of sessions.values()) if (s.online) out.push(s.deviceId);
      return out;
    },
    get size() {
      return sessions.size;
    },
  };
}
