// Issue 11: the first leg of a digest registration answered statelessly (register-challenge.ts) over a
// real UDP socket, the device side as createApp builds it: no server transaction for the 401, the same
// To-tag for a retransmission, either challenge's answer accepted once, a stale answer challenged again,
// what the ordinary handler answers otherwise (423, 400) unchanged, and the 401 counted in the metrics.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { buildAuthorization } from '@vms/sip';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { createDeviceEvents } from '../../src/events/device-events.ts';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.ts';
import { startDeviceSide, type DeviceSide } from '../../src/sip/device-side.ts';

const PASSWORD = 'devpass1';
const REALM = '3402000000';
const URI = `sip:34020000002000000001@${REALM}`;
const log = pino({ level: 'silent' });

interface Peer {
  readonly port: number;
  send(text: string): Promise<void>;
  /** The next datagram, as text. */
  next(): Promise<string>;
  close(): void;
}

async function udpPeer(target: number): Promise<Peer> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const inbox: string[] = [];
  const waiting: ((s: string) => void)[] = [];
  sock.on('message', (d) => {
    const w = waiting.shift();
    if (w === undefined) inbox.push(d.toString('latin1'));
    else w(d.toString('latin1'));
  });
  return {
    port: sock.address().port,
    send: (text) => new Promise((resolve, reject) => sock.send(text, target, '127.0.0.1', (err) => (err === null ? resolve() : reject(err)))),
    next: () => {
      const ready = inbox.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no answer within 3 s')), 3000);
        waiting.push((s) => {
          clearTimeout(t);
          resolve(s);
        });
      });
    },
    close: () => sock.close(),
  };
}

const header = (msg: string, name: string): string | undefined => new RegExp(`\\r\\n${name}:[ \\t]*([^\\r\\n]*)`, 'i').exec(msg)?.[1];
const status = (msg: string): number => Number(msg.slice(8, 11));

describe('REGISTER first leg answered statelessly (issue 11)', () => {
  let side: DeviceSide;
  let metrics: Metrics;
  const clock = new FakeClock(Date.UTC(2025, 5, 1));
  const devices = createMemoryDeviceRepository();
  let n = 0;

  /** A REGISTER of `deviceId` from `peer`; `extra` header lines replace the default Expires when one is given. */
  const register = (peer: Peer, deviceId: string, o: { cseq?: number; callId?: string; branch?: string; authorization?: string; extra?: string[] } = {}): string =>
    [
      `REGISTER ${URI} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};rport;branch=${o.branch ?? `z9hG4bK-st-${++n}`}`,
      `From: <sip:${deviceId}@${REALM}>;tag=st${deviceId.slice(-3)}`,
      `To: <sip:${deviceId}@${REALM}>`,
      `Call-ID: ${o.callId ?? `st-${deviceId}@test`}`,
      `CSeq: ${o.cseq ?? 1} REGISTER`,
      `Contact: <sip:${deviceId}@127.0.0.1:${peer.port}>`,
      ...(o.authorization === undefined ? [] : [`Authorization: ${o.authorization}`]),
      'Max-Forwards: 70',
      ...(o.extra ?? ['Expires: 3600']),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
  const answer = (challenge: string, deviceId: string): string => buildAuthorization(challenge, { username: deviceId, password: PASSWORD, method: 'REGISTER', uri: URI });
  const counted = async (result: string): Promise<number> => {
    const m = new RegExp(`^vms_sip_registrations_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(await metrics.render());
    return m === null ? 0 : Number(m[1]);
  };

  before(async () => {
    const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_PASSWORD: PASSWORD });
    const events = createDeviceEvents(log);
    side = await startDeviceSide({ sip: config.sip, devices, events, clock, log, utcOffsetMinutes: 480, userAgent: 'test' });
    metrics = createMetrics({ instanceId: 'a', version: 'test', events, devicesOnline: () => 0, isLeader: () => false, media: () => null, defaultMetrics: false });
  });

  after(async () => {
    metrics?.close();
    await side?.close();
  });

  it('401 without a server transaction; a retransmission gets a 401 with the same To-tag; the answer to either nonce registers once', async () => {
    const dev = '34020000001320000011';
    const peer = await udpPeer(side.sipPort);
    try {
      const challengedBefore = await counted('challenged');
      const first = register(peer, dev, { branch: 'z9hG4bK-st-retrans' });
      await peer.send(first);
      const a = await peer.next();
      await peer.send(first); // a retransmission: answered again, statelessly
      const b = await peer.next();
      for (const r of [a, b]) {
        assert.equal(status(r), 401);
        assert.match(header(r, 'WWW-Authenticate') ?? '', /^Digest realm="3402000000", nonce="[0-9a-f]{32}", algorithm=MD5, qop="auth"$/);
        assert.match(header(r, 'Via') ?? '', new RegExp(`^SIP/2\\.0/UDP 127\\.0\\.0\\.1:${peer.port};rport=${peer.port};branch=z9hG4bK-st-retrans;received=127\\.0\\.0\\.1$`));
        assert.equal(header(r, 'Server'), 'test');
      }
      const tag = /;tag=([0-9a-f]{16})$/.exec(header(a, 'To') ?? '')?.[1];
      assert.ok(tag !== undefined);
      assert.equal(/;tag=([0-9a-f]{16})$/.exec(header(b, 'To') ?? '')?.[1], tag, 'RFC 3261 §8.2.7: the same To-tag for the same request');
      assert.equal(side.stack.stats().serverTransactions, 0, 'no transaction kept for the challenge');
      assert.equal(await counted('challenged'), challengedBefore + 2, 'the datagram answers are counted as registrations challenged');

      await peer.send(register(peer, dev, { cseq: 2, authorization: answer(header(a, 'WWW-Authenticate') ?? '', dev) }));
      const ok = await peer.next();
      assert.equal(status(ok), 200);
      assert.equal(header(ok, 'Expires'), '3600');
      assert.equal((await devices.getDevice(dev))?.online, true);
      // the other challenge's nonce is valid too (each once): the device may answer whichever came first
      const second = answer(header(b, 'WWW-Authenticate') ?? '', dev);
      await peer.send(register(peer, dev, { cseq: 3, authorization: second }));
      assert.equal(status(await peer.next()), 200);
      await peer.send(register(peer, dev, { cseq: 4, authorization: second }));
      const replay = await peer.next();
      assert.equal(status(replay), 401, 'a used nonce is not accepted again');
      assert.match(header(replay, 'WWW-Authenticate') ?? '', /stale=true/);
    } finally {
      peer.close();
    }
  });

  it('an answer to a nonce past its lifetime is challenged again with stale=true, then registers', async () => {
    const dev = '34020000001320000012';
    const peer = await udpPeer(side.sipPort);
    try {
      await peer.send(register(peer, dev));
      const challenge = await peer.next();
      assert.equal(status(challenge), 401);
      clock.advance(6 * 60_000); // DEFAULT_NONCE_TTL_MS is 5 min
      await peer.send(register(peer, dev, { cseq: 2, authorization: answer(header(challenge, 'WWW-Authenticate') ?? '', dev) }));
      const stale = await peer.next();
      assert.equal(status(stale), 401);
      assert.match(header(stale, 'WWW-Authenticate') ?? '', /stale=true/);
      await peer.send(register(peer, dev, { cseq: 3, authorization: answer(header(stale, 'WWW-Authenticate') ?? '', dev) }));
      assert.equal(status(await peer.next()), 200);
    } finally {
      peer.close();
    }
  });

  it('an answer to a challenge issued for another device id gets a fresh 401, never a registration', async () => {
    const peer = await udpPeer(side.sipPort);
    try {
      await peer.send(register(peer, '34020000001320000013'));
      const challenge = header(await peer.next(), 'WWW-Authenticate') ?? '';
      const other = '34020000001320000014';
      await peer.send(register(peer, other, { cseq: 2, authorization: answer(challenge, other) }));
      const r = await peer.next();
      assert.equal(status(r), 401);
      assert.doesNotMatch(header(r, 'WWW-Authenticate') ?? '', /stale/);
      assert.equal(await devices.getDevice(other), null);
    } finally {
      peer.close();
    }
  });

  it('what the ordinary handler answers is unchanged: 423 before any challenge, 400 for a non-GB id, a Contact lifetime challenged', async () => {
    const peer = await udpPeer(side.sipPort);
    try {
      await peer.send(register(peer, '34020000001320000015', { extra: ['Expires: 30'] }));
      const brief = await peer.next();
      assert.equal(status(brief), 423);
      assert.equal(header(brief, 'Min-Expires'), '60');
      await peer.send(register(peer, 'admin'));
      assert.equal(status(await peer.next()), 400);
      await peer.send(register(peer, '34020000001320000015', { extra: ['Expires: 12345678901'] }));
      assert.equal(status(await peer.next()), 400);
      // no Expires header: the ordinary handler reads the Contact parameter (too brief here, then fine)
      await peer.send(register(peer, '34020000001320000015', { extra: [] }).replace(/(Contact: <[^>]+>)/, '$1;expires=10'));
      assert.equal(status(await peer.next()), 423);
      await peer.send(register(peer, '34020000001320000015', { extra: [] }));
      assert.equal(status(await peer.next()), 401);
    } finally {
      peer.close();
    }
  });
});
