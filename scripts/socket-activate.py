#!/usr/bin/env python3
"""Start one signaling instance on a SIP port it shares with other instances on this host.

    scripts/socket-activate.py HOST PORT -- COMMAND [ARG...]

Opens a UDP socket and a listening TCP socket on HOST:PORT with SO_REUSEPORT, hands them to COMMAND as
file descriptors 3 and 4 the way systemd's socket activation does (LISTEN_FDS=2, LISTEN_PID, and
LISTEN_FDNAMES=sip-udp:sip-tcp), and becomes COMMAND (exec, same pid). COMMAND must be the instance's
own process, as LISTEN_PID names it: `node --import tsx services/signaling/src/main.ts`, not `npm start`
or `npx tsx`, which run it as a child. Run it once per instance: the
kernel then keeps each device's source address:port on one of them (docs/architecture.md, "Instances
sharing a port").

Why a launcher: Node 20's dgram and net cannot set SO_REUSEPORT (the option arrived in Node 22.12, where
`vms.gb28181.sip.reuse-port: true` does it without this script). Under systemd, a socket unit with
ReusePort=yes and FileDescriptorName=sip-udp / sip-tcp does the same job.
"""
import fcntl
import os
import socket
import sys

FIRST_FD = 3  # sd_listen_fds(3): passed descriptors start at 3, in LISTEN_FDNAMES order


def shared_socket(family: int, kind: int, host: str, port: int) -> socket.socket:
    s = socket.socket(family, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    if kind == socket.SOCK_STREAM:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    if kind == socket.SOCK_STREAM:
        s.listen(1024)
    return s


def main(argv: list) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write(__doc__)
        return 2
    host, port_text, command = argv[1], argv[2], argv[4:]
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        sys.stderr.write(f"socket-activate: PORT must be 1-65535 (got {port_text!r})\n")
        return 2
    port = int(port_text)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        udp = shared_socket(family, socket.SOCK_DGRAM, host, port)
        tcp = shared_socket(family, socket.SOCK_STREAM, host, port)
    except OSError as err:
        sys.stderr.write(f"socket-activate: cannot share {host}:{port}: {err}\n")
        return 1
    # above 3 and 4 first, so that moving one onto 3 or 4 cannot close the other
    high = [fcntl.fcntl(s.fileno(), fcntl.F_DUPFD, 10) for s in (udp, tcp)]
    udp.close()
    tcp.close()
    for i, fd in enumerate(high):
        os.dup2(fd, FIRST_FD + i, inheritable=True)
        os.close(fd)
    env = dict(os.environ, LISTEN_FDS="2", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="sip-udp:sip-tcp")
    try:
        os.execvpe(command[0], command, env)
    except OSError as err:
        sys.stderr.write(f"socket-activate: cannot run {command[0]}: {err}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
