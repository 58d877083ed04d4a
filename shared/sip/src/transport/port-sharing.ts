// Several instances on one host behind one SIP port (SO_REUSEPORT): the kernel hashes each datagram's and
// each connection's source address:port to one of the sockets bound there, so a device (one address:port)
// always reaches the same instance while the set of instances stays the same, and the instances divide
// the registrations between them: one process's event loop is the ceiling of a REGISTER storm, and a
// host with more cores runs one instance per core (issue 11). Node sets SO_REUSEPORT itself from 22.12
// (dgram and net `reusePort`); before that a launcher opens the sockets and hands them over the way
// systemd's socket activation does (scripts/socket-activate.py, or a socket unit with ReusePort=yes).

/** How this instance shares its SIP port. */
export type PortSharing =
  /** Node binds with SO_REUSEPORT (needs nodeSetsReusePort()). */
  | { readonly kind: 'reuse-port' }
  /** Sockets the launcher opened with SO_REUSEPORT: a UDP socket and a listening TCP socket, by descriptor. */
  | { readonly kind: 'inherited'; readonly udpFd: number; readonly tcpFd: number };

/** Whether this Node's dgram and net take `reusePort` (22.12 on the 22 line, 23.1 on): older ones ignore it silently. */
export function nodeSetsReusePort(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** sd_listen_fds(3): the first descriptor a launcher passes. */
export const FIRST_LISTEN_FD = 3;

/** The names the SIP sockets are passed under (LISTEN_FDNAMES; systemd's FileDescriptorName=). */
export const LISTEN_FD_NAMES = { udp: 'sip-udp', tcp: 'sip-tcp' } as const;

/**
 * The SIP sockets handed over by a launcher, from the environment of systemd's socket activation
 * (sd_listen_fds(3)): LISTEN_PID must be this process (else the variables were meant for a parent and
 * are not ours: null), LISTEN_FDS the count from descriptor 3, LISTEN_FDNAMES their names, colon
 * separated. Returns null when nothing was handed over, else the two descriptors or the problem.
 */
export function listenFdsFromEnv(env: Readonly<Record<string, string | undefined>>, pid: number): { udpFd: number; tcpFd: number } | { problem: string } | null {
  const count = env['LISTEN_FDS'];
  if (count === undefined || count === '' || env['LISTEN_PID'] !== String(pid)) return null;
  if (!/^[1-9]\d{0,3}$/.test(count)) return { problem: `LISTEN_FDS must be a count of descriptors (got ${JSON.stringify(count)})` };
  const names = (env['LISTEN_FDNAMES'] ?? '').split(':');
  if (names.length !== Number(count)) {
    return { problem: `LISTEN_FDNAMES must name each of the ${count} descriptors, colon separated, among them ${LISTEN_FD_NAMES.udp} and ${LISTEN_FD_NAMES.tcp} (got ${JSON.stringify(env['LISTEN_FDNAMES'] ?? '')})` };
  }
  const udp = names.indexOf(LISTEN_FD_NAMES.udp);
  const tcp = names.indexOf(LISTEN_FD_NAMES.tcp);
  if (udp < 0 || tcp < 0) return { problem: `LISTEN_FDNAMES must name a ${LISTEN_FD_NAMES.udp} and a ${LISTEN_FD_NAMES.tcp} descriptor (got ${JSON.stringify(env['LISTEN_FDNAMES'])})` };
  return { udpFd: FIRST_LISTEN_FD + udp, tcpFd: FIRST_LISTEN_FD + tcp };
}
