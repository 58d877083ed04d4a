// The REGISTER shedder reads its SIP socket's receive queue from /proc/net/udp, but not in a network
// namespace holding more than QUEUE_READ_MAX_SOCKETS UDP sockets: it then decides by its socket's queueing
// delay, probed (shared/sip overload/queue-probe.ts). Before that probe it decided by event-loop
// utilization, which reads busy long before the instance falls behind: on 3 Dec a fleet run beside another
// session's keepalive bench (10,000 devices, a port each) measured a clean rate of 0/s. The sockets of
// another process also say another process is at work beside the bench: a rate bench checks the namespace
// during its run and says so.
import { QUEUE_READ_MAX_SOCKETS, udpSocketsOfNamespace } from '@vms/sip';

export interface CrowdingWatch {
  /** Samples the namespace now (call around each measured step). */
  check(): void;
  /** The warning to print beside the figures, or null when the namespace stayed under the bound. */
  warning(): string | null;
}

export function watchUdpCrowding(): CrowdingWatch {
  let most = 0;
  return {
    check() {
      most = Math.max(most, udpSocketsOfNamespace() ?? 0);
    },
    warning: () =>
      most > QUEUE_READ_MAX_SOCKETS
        ? `WARNING: up to ${most} UDP sockets in this network namespace during the run (> ${QUEUE_READ_MAX_SOCKETS}): another process was at work beside the bench (and the platform's shedder decided by its queue's probed delay, not its bytes), so its rate rows are not the platform's alone. Run it alone.`
        : null,
  };
}

/**
 * The most UDP sockets the namespace held while `work` ran, sampled every 200 ms. With SIPp's `-t un`
 * (a socket per call) SIPp's own sockets count: past QUEUE_READ_MAX_SOCKETS the shedder decides by its
 * queue's probed delay instead of its bytes, so a step whose calls pile up beyond that says so.
 */
export async function udpSocketPeak<T>(work: Promise<T>): Promise<{ readonly result: T; readonly peak: number; readonly crowded: boolean }> {
  let peak = udpSocketsOfNamespace() ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, udpSocketsOfNamespace() ?? 0);
  }, 200);
  try {
    const result = await work;
    return { result, peak, crowded: peak > QUEUE_READ_MAX_SOCKETS };
  } finally {
    clearInterval(timer);
  }
}
