// The receive queue of a UDP socket on Linux, read from /proc (the I/O beside register-shedding.ts's
// parsers): what has arrived on the SIP port and not been read yet, i.e. how far the process is behind.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { localPortSuffix, QUEUE_READ_MAX_SOCKETS, udpReceiveQueueBytes, udpSocketsInUse } from './register-shedding.ts';

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
export function readReceiveQueue(port: number, crowded?: (sockets: number) => void, read: (file: string) => string = readProc, inode?: string): number | null {
  const sockets = udpSocketsOfNamespace(read);
  if (sockets !== null && sockets > QUEUE_READ_MAX_SOCKETS) {
    crowded?.(sockets);
    return null;
  }
  let total: number | null = null;
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    try {
      const q = udpReceiveQueueBytes(read(file), port, inode);
      if (q !== null) total = (total ?? 0) + q;
    } catch {
      // not Linux, or no IPv6: the utilization fallback decides
    }
  }
  return total;
}

/** Inodes of the sockets among this process's descriptors (/proc/self/fd links `socket:[N]`). */
function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m?.[1] !== undefined) inodes.add(m[1]);
    } catch {
      // closed meanwhile (the directory's own descriptor)
    }
  }
  return inodes;
}

/**
 * The inode of this process's UDP socket on `port`, for an instance that shares the port with others
 * (SO_REUSEPORT): /proc/net/udp lists every instance's socket there and each has its own queue, so the
 * shedder must read its own. Read once after binding; null off Linux or when not found (the queue is then
 * summed over the port: conservative, an instance sheds when the host is behind).
 */
export function ownUdpSocketInode(port: number, read: (file: string) => string = readProc, mine: () => Set<string> = ownSocketInodes): string | null {
  const suffix = localPortSuffix(port);
  let inodes: Set<string>;
  try {
    inodes = mine();
  } catch {
    return null;
  }
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    let text: string;
    try {
      text = read(file);
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(suffix) === true && f[9] !== undefined && inodes.has(f[9])) return f[9];
    }
  }
  return null;
}
