// test/sipp/storm-device.xml (the benches' SIPp devices) takes an answer for the request it sent, not a late
// answer of an earlier one. SIPp matches answers by Call-ID only, and on the loaded machine of
// test/bench/fleet-kill.ts a 503 (Retry-After up to 600 s) or a 401 of an earlier REGISTER of the same device
// arrived after the device had sent the next one: the device waited out the Retry-After, ignored the real
// 200, and the bench counted it lost. The scenario compares the answer's CSeq with its request's and waits
// on for its own answer when they differ.
// Here a registrar on a UDP socket answers every request of one SIPp device, and sends stale answers first:
// a 503 Retry-After 600 of the first REGISTER before the digest REGISTER's 200, a 404 of a keepalive before
// the next keepalive's 200. The device must register once and keep alive without registering again.
import assert from 'node:assert/strict';
import { createSocket, type RemoteInfo } from 'node:dgram';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { runSipp, writeInjectionCsv } from '@vms/harness';

const SCENARIO = join(dirname(fileURLToPath(import.meta.url)), '..', 'sipp', 'storm-device.xml');
const DEVICE = '34020000001320000001';

const header = (msg: string, name: string): string => new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi').exec(msg)?.[1]?.trim() ?? '';

/** An answer to `req` (its Via, From, To, Call-ID; `cseq` = the CSeq line to put, stale or its own). */
function answer(req: string, status: string, cseq: string, extra: string[] = []): string {
  const lines = [`SIP/2.0 ${status}`, `Via: ${header(req, 'Via')}`, `From: ${header(req, 'From')}`, `To: ${header(req, 'To')};tag=reg1`, `Call-ID: ${header(req, 'Call-ID')}`, `CSeq: ${cseq}`, ...extra, 'Content-Length: 0'];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

describe('storm-device.xml: a late answer of an earlier request is not taken for the current one', () => {
  it('a stale 503 (Retry-After 600) before the 200 and a stale 404 of a keepalive change nothing', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    const seen: { method: string; cseq: string; auth: boolean }[] = [];
    let firstRegister: string | null = null;
    let lastKeepalive: string | null = null;
    let closed = false;
    const timers = new Set<NodeJS.Timeout>();
    const send = (text: string, to: RemoteInfo): void => {
      if (!closed) socket.send(text, to.port, to.address);
    };
    const later = (fn: () => void): void => {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, 200);
      timers.add(t);
    };
    socket.on('message', (buf, from) => {
      const msg = buf.toString('utf8');
      const method = msg.split(' ', 1)[0] ?? '';
      if (method === 'SIP/2.0') return;
      const cseq = header(msg, 'CSeq');
      const auth = header(msg, 'Authorization') !== '';
      if (seen.some((s) => s.method === method && s.cseq === cseq)) return; // a retransmission: answered once
      seen.push({ method, cseq, auth });
      if (method === 'REGISTER' && !auth) {
        firstRegister = msg;
        send(answer(msg, '401 Unauthorized', cseq, ['WWW-Authenticate: Digest realm="3402000000", nonce="abc", algorithm=MD5']), from);
      } else if (method === 'REGISTER') {
        // the first REGISTER's 503, late, then this one's 200
        send(answer(firstRegister ?? msg, '503 Service Unavailable', header(firstRegister ?? msg, 'CSeq'), ['Retry-After: 600']), from);
        later(() => send(answer(msg, '200 OK', cseq, ['Expires: 3600']), from));
      } else if (method === 'MESSAGE') {
        // the previous keepalive's 404 (the platform would not know the device), late, then this one's 200
        if (lastKeepalive !== null) send(answer(lastKeepalive, '404 Not Found', header(lastKeepalive, 'CSeq')), from);
        const ka = msg;
        later(() => send(answer(ka, '200 OK', cseq), from));
        lastKeepalive = msg;
      }
    });
    const sipp = runSipp({
      scenario: SCENARIO,
      remote: `127.0.0.1:${port}`,
      calls: 1,
      rate: 1,
      limit: 1,
      injectionFiles: [writeInjectionCsv([[DEVICE, 'pw', `[authentication username=${DEVICE} password=pw]`]])],
      keys: { gb_server: '34020000002000000001', gb_domain: '3402000000' },
      timeoutMs: 30_000,
      extraArgs: ['-d', '500', '-pause_msg_ign', '-default_behaviors', 'all,-bye,-abortunexp'],
    });
    try {
      const deadline = Date.now() + 20_000;
      while (seen.filter((s) => s.method === 'MESSAGE').length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const registers = seen.filter((s) => s.method === 'REGISTER');
      // before the fix: the stale 503 was taken for the digest REGISTER's answer (a 600 s wait, no keepalive)
      assert.deepEqual(
        registers.map((r) => r.auth),
        [false, true],
        `one registration, no other REGISTER: ${JSON.stringify(seen)}`,
      );
      assert.ok(seen.filter((s) => s.method === 'MESSAGE').length >= 4, `keepalives after the stale answers: ${JSON.stringify(seen)}`);
    } finally {
      await sipp.stop();
      closed = true;
      for (const t of timers) clearTimeout(t);
      socket.close();
    }
  });
});
