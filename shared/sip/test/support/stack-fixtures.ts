// Real-socket helpers: stacks and raw UDP/TCP peers on 127.0.0.1 with OS-chosen ports.
import dgram from 'node:dgram';
import net from 'node:net';
import { once } from 'node:events';
import { createSipStack, type SipStack } from '../../src/ua/stack.ts';
import type { SipStackOptions } from '../../src/ua/types.ts';

export const HOST = '127.0.0.1';

export function startStack(opts: Partial<SipStackOptions> = {}): Promise<SipStack> {
  return createSipStack({ host: HOST, port: 0, timers: { T1: 50, T2: 400, T4: 500 }, ...opts });
}

/** A raw UDP peer: send bytes, wait for the next datagram. */
export async function rawUdp(): Promise<{
  port: number;
  send(data: string | Buffer, port: number): Promise<void>;
  next(timeoutMs?: number): Promise<string>;
  /** Next datagram matching `re`, skipping others (e.g. retransmissions of what came before). */
  nextMatching(re: RegExp, timeoutMs?: number): Promise<string>;
  close(): void;
}> {
  const sock = dgram.createSocket('udp4');
  sock.bind(0, HOST);
  await once(sock, 'listening');
  const queue: string[] = [];
  const waiters: Array<(s: string) => void> = [];
  sock.on('message', (m) => {
    const w = waiters.shift();
    if (w !== undefined) w(m.toString('latin1'));
    else queue.push(m.toString('latin1'));
  });
  const next = (timeoutMs = 2000): Promise<string> =>
    new Promise((resolve, reject) => {
      const q = queue.shift();
      if (q !== undefined) return resolve(q);
      const t = setTimeout(() => reject(new Error('no datagram')), timeoutMs);
      waiters.push((s) => {
        clearTimeout(t);
        resolve(s);
      });
    });
  return {
    port: sock.address().port,
    next,
    nextMatching: async (re, timeoutMs = 2000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = await next(Math.max(1, deadline - Date.now()));
        if (re.test(m)) return m;
      }
    },
    send: (data, port) => new Promise((resolve, reject) => sock.send(data, port, HOST, (e) => (e ? reject(e) : resolve()))),
    close: () => sock.close(),
  };
}

/** A raw TCP client: write chunks, read everything received so far / wait for a pattern. */
export async function rawTcp(port: number): Promise<{
  socket: net.Socket;
  write(data: string | Buffer): Promise<void>;
  waitFor(pred: (all: string) => boolean, timeoutMs?: number): Promise<string>;
  received(): string;
  close(): void;
}> {
  const socket = net.connect(port, HOST);
  await once(socket, 'connect');
  let buf = '';
  const checks = new Set<() => void>();
  socket.on('data', (d: Buffer) => {
    buf += d.toString('latin1');
    for (const c of [...checks]) c();
  });
  socket.on('error', () => {});
  return {
    socket,
    write: (data) => new Promise((resolve, reject) => socket.write(data, (e) => (e ? reject(e) : resolve()))),
    waitFor: (pred, timeoutMs = 2000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (pred(buf)) {
            checks.delete(check);
            clearTimeout(t);
            resolve(buf);
          }
        };
        const t = setTimeout(() => {
          checks.delete(check);
          reject(new Error(`timeout waiting; got: ${JSON.stringify(buf.slice(0, 300))}`));
        }, timeoutMs);
        checks.add(check);
        check();
      }),
    received: () => buf,
    close: () => socket.destroy(),
  };
}

/** A minimal request as a device would write it (CRLF line ends, Content-Length computed). */
export function rawRequest(opts: {
  method?: string;
  port: number;
  transport?: 'UDP' | 'TCP';
  viaHost?: string;
  viaPort: number;
  branch?: string;
  rport?: boolean;
  callId?: string;
  cseq?: number;
  body?: string;
  extra?: string[];
}): string {
  const method = opts.method ?? 'MESSAGE';
  const body = opts.body ?? '';
  const lines = [
    `${method} sip:34020000002000000001@${HOST}:${opts.port} SIP/2.0`,
    `Via: SIP/2.0/${opts.transport ?? 'UDP'} ${opts.viaHost ?? HOST}:${opts.viaPort}${opts.rport === false ? '' : ';rport'};branch=${opts.branch ?? 'z9hG4bK' + Math.random().toString(16).slice(2)}`,
    'From: <sip:34020000001320000001@3402000000>;tag=dev1',
    'To: <sip:34020000002000000001@3402000000>',
    `Call-ID: ${opts.callId ?? 'raw-' + Math.random().toString(16).slice(2)}`,
    `CSeq: ${opts.cseq ?? 1} ${method}`,
    'Max-Forwards: 70',
    ...(opts.extra ?? []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ];
  return lines.join('\r\n');
}
