// The receive queue of a UDP socket on Linux, read from /proc (the I/O beside register-shedding.ts's
// parsers): what has arrived on the SIP port and not been read yet, i.e. how far the process is behind.
import { readFileSync } from 'node:fs';
import { QUEUE_READ_MAX_SOCKETS, udpReceiveQueueBytes, udpSocketsInUse } from './register-shedding.ts';

const readProc = (file: string): string => readFileSync(file, 'latin1');

/** UDP sockets of the network namespace (sockstat: a few lines, whatever the count), null when unreadable. */
export function udpSocketsOfNamespace(read: (file: string) => string = readProc): number | null {
  let total: number | null = null;
  for (const file of ['/proc/net/sockstat', '/proc/net/sockstat6']) {
    try {
      const n = udpSocketsInUse(read(file));
      if (n !== null) total = (total ?? 0) + n;
    } catch {
      // not Linux, or no IPv6
    }
  }
  return total;
}

/**
 * Receive-queue bytes of the UDP socket on `port` (IPv4 and IPv6 tables); null off Linux, when
 * unreadable, or when the namespace holds more than QUEUE_READ_MAX_SOCKETS UDP sockets (the table's
 * read would block the loop: see there). `crowded` hears the count then.
 */
export function readReceiveQueue(port: number, crowded?: (sockets: number) => void, read: (file: string) => string = readProc): number | null {
  const sockets = udpSocketsOfNamespace(read);
  if (sockets !== null && sockets > QUEUE_READ_MAX_SOCKETS) {
    crowded?.(sockets);
    return null;
  }
  let total: number | null = null;
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    try {
      const q = udpReceiveQueueBytes(read(file), port);
      if (q !== null) total = (total ?? 0) + q;
    } catch {
      // not Linux, or no IPv6: the utilization fallback decides
    }
  }
  return total;
}
