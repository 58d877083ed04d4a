// Hand-written SIP for the attacker's side of the chaos tests: bytes built here, sent from sockets the test
// owns (a port the platform never saw), responses read with the @vms/sip parser. Nothing of the
// platform's own stack is used to attack it.
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { buildAuthorization, parseSipMessage, SipStreamFramer, type SipRequest, type SipResponse } from '@vms/sip';

export const branch = (): string => `z9hG4bK${randomBytes(8).toString('hex')}`;
const tag = (): string => randomBytes(4).toString('hex');

export interface MessageParts {
  readonly deviceId: string;
  readonly serverId: string;
  /** host:port written in Via and Contact. */
  readonly sentBy: string;
  readonly transport: 'UDP' | 'TCP';
  readonly body: string;
  readonly cseq: number;
  readonly callId?: string;
}

/** A MESSAGE from the device to the platform (GB/T 28181 §9.3 keepalive, §9.5 catalog response). */
export function deviceMessage(p: MessageParts): Buffer {
  const realm = p.serverId.slice(0, 10);
  const body = Buffer.from(p.body, 'utf8');
  const head =
    `MESSAGE sip:${p.serverId}@${realm} SIP/2.0\r\n` +
    `Via: SIP/2.0/${p.transport} ${p.sentBy};rport;branch=${branch()}\r\n` +
    `From: <sip:${p.deviceId}@${realm}>;tag=${tag()}\r\n` +
    `To: <sip:${p.serverId}@${realm}>\r\n` +
    `Call-ID: ${p.callId ?? randomBytes(8).toString('hex')}\r\n` +
    `CSeq: ${p.cseq} MESSAGE\r\n` +
    `Max-Forwards: 70\r\n` +
    `Content-Type: Application/MANSCDP+xml\r\n` +
    `Content-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

export function keepaliveBody(deviceId: string, sn: number): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${deviceId}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`;
}

/** A Catalog Response of `count` items of about 200 bytes each, channel ids from `firstChannel` on. */
export function catalogBody(deviceId: string, sn: number, sumNum: number, firstChannel: number, count: number): string {
  const items: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${deviceId.slice(0, 10)}131${String(firstChannel + i).padStart(7, '0')}`;
    items.push(`<Item>\r\n<DeviceID>${id}</DeviceID>\r\n<Name>flood ${firstChannel + i}</Name>\r\n<Manufacturer>chaos</Manufacturer>\r\n<Model>m</Model>\r\n<Owner>o</Owner>\r\n<CivilCode>3402000000</CivilCode>\r\n<Address>a</Address>\r\n<Parental>0</Parental>\r\n<ParentID>${deviceId}</ParentID>\r\n<Status>ON</Status>\r\n</Item>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\r\n<Response>\r\n<CmdType>Catalog</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${deviceId}</DeviceID>\r\n<SumNum>${sumNum}</SumNum>\r\n<DeviceList Num="${count}">\r\n${items.join('\r\n')}\r\n</DeviceList>\r\n</Response>\r\n`;
}

/** A REGISTER from the device (no credentials). */
export function registerRequest(o: { deviceId: string; serverId: string; sentBy: string; transport: 'UDP' | 'TCP'; expires: number }): Buffer {
  const realm = o.serverId.slice(0, 10);
  return Buffer.from(
    `REGISTER sip:${o.serverId}@${realm} SIP/2.0\r\n` +
      `Via: SIP/2.0/${o.transport} ${o.sentBy};rport;branch=${branch()}\r\n` +
      `From: <sip:${o.deviceId}@${realm}>;tag=${tag()}\r\n` +
      `To: <sip:${o.deviceId}@${realm}>\r\n` +
      `Call-ID: ${randomBytes(8).toString('hex')}\r\n` +
      `CSeq: 1 REGISTER\r\n` +
      `Contact: <sip:${o.deviceId}@${o.sentBy}>\r\n` +
      `Max-Forwards: 70\r\n` +
      `Expires: ${o.expires}\r\n` +
      `Content-Length: 0\r\n\r\n`,
    'latin1',
  );
}

/**
 * The same REGISTER as an attacker replays it (RFC 3261 §22.4 says nothing binds Authorization to the
 * transaction): new Via branch, next CSeq, optionally another Expires; Authorization kept byte for byte.
 */
export function replayedRegister(captured: Buffer, o: { sentBy: string; expires?: number }): Buffer {
  let text = captured.toString('latin1');
  text = text.replace(/^(Via|v)\s*:[^\r\n]*/im, `Via: SIP/2.0/UDP ${o.sentBy};rport;branch=${branch()}`);
  text = text.replace(/^CSeq\s*:\s*(\d+)/im, (_m, n: string) => `CSeq: ${Number(n) + 1}`);
  if (o.expires !== undefined) {
    text = /^Expires\s*:/im.test(text) ? text.replace(/^Expires\s*:[^\r\n]*/im, `Expires: ${o.expires}`) : text.replace('\r\n\r\n', `\r\nExpires: ${o.expires}\r\n\r\n`);
    text = text.replace(/;expires=\d+/i, '');
  }
  return Buffer.from(text, 'latin1');
}

export interface UdpPeer {
  readonly port: number;
  /** Sends `bytes` and resolves with the first final response of the same Call-ID (null after `timeoutMs`). */
  request(bytes: Buffer, timeoutMs?: number): Promise<SipResponse | null>;
  close(): Promise<void>;
}

export async function udpPeer(target: number): Promise<UdpPeer> {
  const socket: UdpSocket = createSocket('udp4');
  const waiters = new Map<string, (r: SipResponse) => void>();
  socket.on('message', (msg) => {
    try {
      const m = parseSipMessage(msg);
      const callId = m.headers.get('Call-ID');
      if (m.type === 'response' && m.status >= 200 && callId !== undefined) waiters.get(callId)?.(m);
    } catch {
      // not ours to judge here
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    port: socket.address().port,
    request(bytes, timeoutMs = 3000) {
      const callId = /^(?:Call-ID|i)\s*:\s*(\S+)/im.exec(bytes.toString('latin1'))?.[1] ?? '';
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(callId);
          resolve(null);
        }, timeoutMs);
        waiters.set(callId, (r) => {
          clearTimeout(timer);
          waiters.delete(callId);
          resolve(r);
        });
        socket.send(bytes, target, '127.0.0.1');
      });
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

export interface TcpPeer {
  readonly socket: Socket;
  readonly localPort: number;
  /** Final responses received so far. */
  readonly responses: SipResponse[];
  /** Requests the platform sent (each answered 200 at once). */
  readonly requests: SipRequest[];
  closed: boolean;
}

/** A 200 OK to `req`, built by hand (RFC 3261 §8.2.6.2: Via, From, Call-ID, CSeq copied; To tagged). */
function ok(req: SipRequest): Buffer {
  const h = (name: string): string => req.headers.get(name) ?? '';
  const to = h('To');
  return Buffer.from(
    `SIP/2.0 200 OK\r\nVia: ${h('Via')}\r\nFrom: ${h('From')}\r\nTo: ${/;tag=/i.test(to) ? to : `${to};tag=${tag()}`}\r\nCall-ID: ${h('Call-ID')}\r\nCSeq: ${h('CSeq')}\r\nContent-Length: 0\r\n\r\n`,
    'latin1',
  );
}

/** A TCP connection to the platform that frames and keeps every response it gets, and answers requests 200. */
export async function tcpPeer(target: number): Promise<TcpPeer> {
  const socket = connect(target, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const peer: TcpPeer = { socket, localPort: socket.localPort ?? 0, responses: [], requests: [], closed: false };
  const framer = new SipStreamFramer({ onKeepalive: () => undefined });
  socket.on('data', (d) => {
    try {
      for (const frame of framer.push(d)) {
        const m = parseSipMessage(frame);
        if (m.type === 'response' && m.status >= 200) peer.responses.push(m);
        if (m.type === 'request') {
          peer.requests.push(m);
          socket.write(ok(m));
        }
      }
    } catch {
      socket.destroy();
    }
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    peer.closed = true;
  });
  return peer;
}

/** Waits for the `n`-th final response on `peer` (1-based). */
async function nthResponse(peer: TcpPeer, n: number, timeoutMs: number): Promise<SipResponse> {
  const deadline = Date.now() + timeoutMs;
  while (peer.responses.length < n) {
    if (peer.closed || Date.now() > deadline) throw new Error(`no response ${n} on TCP (closed: ${peer.closed})`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return peer.responses[n - 1] as SipResponse;
}

/** REGISTER over `peer` answering the digest challenge (GB/T 28181 §9.1.2.1); resolves on 200. */
export async function registerOverTcp(peer: TcpPeer, o: { deviceId: string; serverId: string; password: string; expires?: number }): Promise<void> {
  const sentBy = `127.0.0.1:${peer.localPort}`;
  const first = registerRequest({ deviceId: o.deviceId, serverId: o.serverId, sentBy, transport: 'TCP', expires: o.expires ?? 3600 });
  const seen = peer.responses.length;
  peer.socket.write(first);
  const challenge = await nthResponse(peer, seen + 1, 5000);
  if (challenge.status === 200) return;
  const www = challenge.headers.get('WWW-Authenticate');
  if (challenge.status !== 401 || www === undefined) throw new Error(`REGISTER answered ${challenge.status}`);
  const uri = `sip:${o.serverId}@${o.serverId.slice(0, 10)}`;
  const auth = buildAuthorization(www, { username: o.deviceId, password: o.password, method: 'REGISTER', uri });
  let text = first.toString('latin1').replace(/branch=[^\r\n;]+/, `branch=${branch()}`).replace('CSeq: 1 REGISTER', 'CSeq: 2 REGISTER');
  text = text.replace('\r\n\r\n', `\r\nAuthorization: ${auth}\r\n\r\n`);
  peer.socket.write(Buffer.from(text, 'latin1'));
  const answer = await nthResponse(peer, seen + 2, 5000);
  if (answer.status !== 200) throw new Error(`authenticated REGISTER answered ${answer.status}`);
}
