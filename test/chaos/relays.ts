// Loopback relays the chaos tests control, in place of iptables (no root needed, nothing global):
// - a TCP relay one instance's internal base URL points at: `cut()` makes it a black hole (connections
//   stay open, bytes are dropped, new connections are accepted and hang), as a dropped link does;
// - a UDP tap between a device and the platform that records every datagram, so a test can replay a
//   captured REGISTER from another port (a device's flow keeps the tap's one port).
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpRelay {
  readonly port: number;
  /** Where the relay forwards; may be set after the relay is listening. */
  target: number;
  /** From now on every byte in either direction is dropped; open connections stay open. */
  cut(): void;
  /** Passes bytes again; connections opened while cut are closed so clients reconnect. */
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target = 0): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (cut) return; // black hole: accepted, never answered
    const upstream = connect(relay.target, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.on('data', (d) => {
      if (!cut) upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (!cut) client.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('relay: no port');
  const relay: TcpRelay = {
    port: address.port,
    target,
    cut() {
      cut = true;
    },
    heal() {
      cut = false;
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return relay;
}

export interface UdpTap {
  /** The port devices are pointed at. */
  readonly port: number;
  /** Datagrams the device side sent, in order. */
  readonly fromDevice: Buffer[];
  close(): Promise<void>;
}

/** Relays datagrams between one device and `target` (127.0.0.1), recording what the device sent. */
export async function startUdpTap(target: number): Promise<UdpTap> {
  const front = createSocket('udp4');
  const back = createSocket('udp4');
  let device: RemoteInfo | undefined;
  const fromDevice: Buffer[] = [];
  front.on('message', (msg, rinfo) => {
    device = rinfo;
    fromDevice.push(msg);
    back.send(msg, target, '127.0.0.1');
  });
  back.on('message', (msg) => {
    if (device !== undefined) front.send(msg, device.port, device.address);
  });
  const bind = (s: UdpSocket): Promise<void> => new Promise((resolve) => s.bind(0, '127.0.0.1', () => resolve()));
  await Promise.all([bind(front), bind(back)]);
  return {
    port: front.address().port,
    fromDevice,
    async close() {
      await Promise.all([new Promise<void>((r) => front.close(() => r())), new Promise<void>((r) => back.close(() => r()))]);
    },
  };
}
