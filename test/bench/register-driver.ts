// A closed-loop UDP REGISTER driver for benches that need many registered devices fast (1,000,000 in a few
// minutes): at most `window` REGISTERs outstanding, each device id sent until it gets its 200, so the
// rate follows what the server answers instead of piling retransmissions on it (an open-loop SIPp run at
// a fixed rate above the server's pace loses registrations and must be repeated whole).
// The message is the one of test/sipp/register-only.xml (no digest; the bench server runs without a
// device password). Devices are spread over `sockets` local ports, as devices behind NAT come from many
// source ports; every device id keeps its own port (SPEC SEC-1 binds a device to its flow).
import { createSocket, type Socket } from 'node:dgram';

export interface RegisterDriverOptions {
  readonly host: string;
  readonly port: number;
  readonly deviceIds: readonly string[];
  readonly serverId: string;
  readonly realm: string;
  /** REGISTERs awaiting an answer at once; default 100 (400 kept the server's queue long enough to draw resends). */
  readonly window?: number;
  /** Local sockets the devices are spread over; default 16. */
  readonly sockets?: number;
  /** Resend a REGISTER unanswered for this long; default 2000 ms (a loaded server answers late, not never). */
  readonly retransmitMs?: number;
  /** Give up after this long; default 30 min. */
  readonly timeoutMs?: number;
}

export interface RegisterDriverResult {
  readonly registered: number;
  readonly sent: number;
  readonly retransmissions: number;
  readonly seconds: number;
}

/** Registers every id; resolves when all have their 200 OK, rejects at the timeout. */
export async function registerDevices(o: RegisterDriverOptions): Promise<RegisterDriverResult> {
  const window = o.window ?? 100;
  const retransmitMs = o.retransmitMs ?? 2000;
  const ids = o.deviceIds;
  const sockets: Socket[] = [];
  for (let i = 0; i < (o.sockets ?? 16); i++) {
    const s = createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024, sendBufferSize: 4 * 1024 * 1024 });
    await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
    sockets.push(s);
  }
  const socketOf = (i: number): Socket => sockets[i % sockets.length] as Socket;
  const started = Date.now();
  const sentAt = new Map<number, number>(); // device index → last send, for those outstanding
  let next = 0;
  let registered = 0;
  let sent = 0;
  let retransmissions = 0;

  const message = (i: number): Buffer => {
    const id = ids[i] as string;
    const local = socketOf(i).address().port;
    return Buffer.from(
      `REGISTER sip:${o.serverId}@${o.realm} SIP/2.0\r\n` +
        `Via: SIP/2.0/UDP 127.0.0.1:${local};rport;branch=z9hG4bK-mem-${i}\r\n` +
        `From: <sip:${id}@${o.realm}>;tag=r${i}\r\n` +
        `To: <sip:${id}@${o.realm}>\r\n` +
        `Call-ID: reg-${i}@bench\r\n` +
        'CSeq: 1 REGISTER\r\n' +
        `Contact: <sip:${id}@127.0.0.1:${local}>\r\n` +
        'Max-Forwards: 70\r\nExpires: 3600\r\nContent-Length: 0\r\n\r\n',
    );
  };
  const send = (i: number): void => {
    sentAt.set(i, Date.now());
    sent++;
    socketOf(i).send(message(i), o.port, o.host);
  };
  const fill = (): void => {
    while (sentAt.size < window && next < ids.length) send(next++);
  };

  try {
    return await new Promise<RegisterDriverResult>((resolve, reject) => {
      const onMessage = (buf: Buffer): void => {
        const text = buf.toString('latin1');
        const status = Number(text.slice(8, 11));
        const m = /\r\nCall-ID:\s*reg-(\d+)@bench/i.exec(text);
        if (m === null || status < 200) return;
        const i = Number(m[1]);
        if (!sentAt.has(i)) return; // a late answer to a retransmission
        if (status === 200) {
          sentAt.delete(i);
          registered++;
          if (registered === ids.length) {
            clearInterval(ticker);
            resolve({ registered, sent, retransmissions, seconds: (Date.now() - started) / 1000 });
            return;
          }
          fill();
        } else {
          sentAt.set(i, Date.now()); // refused (e.g. 503 under load): sent again at the next tick after retransmitMs
        }
      };
      for (const s of sockets) s.on('message', onMessage);
      const ticker = setInterval(() => {
        const now = Date.now();
        if (now - started > (o.timeoutMs ?? 30 * 60_000)) {
          clearInterval(ticker);
          reject(new Error(`register driver: ${registered} of ${ids.length} registered at the timeout`));
          return;
        }
        for (const [i, at] of sentAt) {
          if (now - at < retransmitMs) continue;
          retransmissions++;
          send(i);
        }
      }, 100);
      fill();
    });
  } finally {
    for (const s of sockets) s.close();
  }
}
