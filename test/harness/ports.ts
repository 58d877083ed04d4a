/**
 * Ports always come from the OS (STYLE §10): bind port 0, read the port, close. Another process can
 * take the port between close and use, so every server start in the harness retries with a fresh
 * port when the server fails to bind.
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

export interface FreePortOptions {
  /** Also require the same UDP port to be free (SIP listens on UDP and TCP). Default false. */
  udp?: boolean;
  host?: string;
}

/** A TCP port (and optionally the same UDP port) that was free a moment ago on 127.0.0.1. */
export async function freePort(opts: FreePortOptions = {}): Promise<number> {
  const host = opts.host ?? '127.0.0.1';
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await bindTcpZero(host);
    if (opts.udp !== true || (await udpFree(host, port))) return port;
  }
  throw new Error('freePort: no port free on both TCP and UDP after 20 attempts');
}

/** `count` distinct free ports (e.g. a Redis Cluster node's client port and bus port). */
export async function freePorts(count: number, opts: FreePortOptions = {}): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(opts));
  return [...ports];
}

function bindTcpZero(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('freePort: no port assigned'))));
    });
  });
}

function udpFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.unref();
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, host, () => socket.close(() => resolve(true)));
  });
}
