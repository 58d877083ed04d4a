// The instance's SIP endpoint: UDP and TCP on bind-host:port, announcing host:port in Via and Contact
// (SPEC §2, §8); the port actually bound readable on the stack (0 = any free port, for tests).
import { createSipStack, type SipStack, type SipStackOptions, type TimerConfig } from '@vms/sip';
import type { Logger } from 'pino';
import type { SipSettings } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';

export interface SipServerOptions {
  readonly sip: SipSettings;
  readonly clock: Clock;
  readonly log: Logger;
  /** Sent as User-Agent / Server. */
  readonly userAgent: string;
  readonly timers?: Partial<TimerConfig>;
  /** SPEC SEC-3 transport bounds; absent ones take @vms/sip's defaults. */
  readonly limits?: SipStackOptions['limits'];
}

/**
 * SO_RCVBUF of the UDP socket: a fleet's keepalives arrive in bursts, and the OS default (~208 KiB,
 * a few hundred datagrams) overflows whenever the process is descheduled for a few milliseconds.
 * The kernel caps it at net.core.rmem_max.
 */
export const UDP_RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

export function startSipServer(o: SipServerOptions): Promise<SipStack> {
  return createSipStack({
    host: o.sip.bindHost,
    port: o.sip.port,
    ...(o.sip.bindHost === o.sip.host ? {} : { publicAddress: { host: o.sip.host } }),
    transports: ['udp', 'tcp'],
    clock: o.clock,
    logger: o.log,
    userAgent: o.userAgent,
    // SPEC §8 NAT: many devices omit `;rport`; answering the source port is what reaches them anyway.
    forceRport: true,
    ...(o.sip.portSharing === null ? {} : { portSharing: o.sip.portSharing }),
    limits: { ...o.limits, udpReceiveBufferBytes: UDP_RECEIVE_BUFFER_BYTES },
    ...(o.timers === undefined ? {} : { timers: o.timers }),
  });
}
