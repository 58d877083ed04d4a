import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, runSipp, writeInjectionCsv } from './index.ts';

const scenario = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'options-uac.xml');

/** Minimal UDP SIP responder: 486 when the Request-URI user starts with "busy", else 200. */
function startResponder(): Promise<{ socket: Socket; port: number; users: string[] }> {
  const socket = createSocket('udp4');
  const users: string[] = [];
  socket.on('message', (msg, rinfo) => {
    const lines = msg.toString('utf8').split('\r\n');
    const user = /^\w+ sip:([^@]+)@/.exec(lines[0] ?? '')?.[1] ?? '';
    users.push(user);
    const copy = lines.filter((l) => /^(Via|From|To|Call-ID|CSeq):/i.test(l));
    const status = user.startsWith('busy') ? '486 Busy Here' : '200 OK';
    const reply = [`SIP/2.0 ${status}`, ...copy.map((l) => (/^To:/i.test(l) ? `${l};tag=r1` : l)), 'Content-Length: 0', '', ''];
    socket.send(reply.join('\r\n'), rinfo.port, rinfo.address);
  });
  return new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve({ socket, port: socket.address().port, users })));
}

describe('runSipp', () => {
  let responder: Awaited<ReturnType<typeof startResponder>>;
  before(async () => {
    responder = await startResponder();
  });
  after(() => {
    responder.socket.close();
  });

  it('built-in uac against built-in uas: exit 0, stats and message trace', async () => {
    const port = await freePort({ udp: true });
    const uas = runSipp({ scenario: { builtin: 'uas' }, localPort: port });
    try {
      const res = await runSipp({ scenario: { builtin: 'uac' }, remote: `127.0.0.1:${port}`, calls: 3, rate: 30, timeoutMs: 15_000 })
        .done;
      assert.equal(res.exitCode, 0, res.output);
      assert.equal(res.ok, true);
      assert.deepEqual(res.stats, { created: 3, successful: 3, failed: 0 });
      assert.match(res.messages, /INVITE sip:/);
      assert.equal(res.errors, '');
    } finally {
      const end = await uas.stop();
      assert.equal(end.timedOut, false);
    }
  });

  it('custom scenario with an injection CSV', async () => {
    const inf = writeInjectionCsv([
      ['34020000001320000001', '34020000002000000001'],
      ['34020000001320000002', '34020000002000000001'],
    ]);
    const res = await runSipp({
      scenario,
      remote: `127.0.0.1:${responder.port}`,
      calls: 2,
      rate: 50,
      injectionFiles: [inf],
      transport: 'u1',
      timeoutMs: 15_000,
    }).done;
    assert.equal(res.exitCode, 0, res.output + res.errors);
    assert.deepEqual(responder.users.slice(-2).sort(), ['34020000001320000001', '34020000001320000002']);
  });

  it('a failed call gives exit code 1 and an error log', async () => {
    const inf = writeInjectionCsv([['busy1', 'caller']]);
    const res = await runSipp({
      scenario,
      remote: `127.0.0.1:${responder.port}`,
      calls: 1,
      injectionFiles: [inf],
      timeoutMs: 15_000,
    }).done;
    assert.equal(res.exitCode, 1);
    assert.equal(res.ok, false);
    assert.match(res.errors, /486 Busy Here/);
    assert.equal(res.stats?.failed, 1);
  });

  it('kills SIPp after timeoutMs', async () => {
    const silent = await freePort({ udp: true }); // nothing listens: SIPp keeps retransmitting
    const inf = writeInjectionCsv([['nobody', 'caller']]);
    const started = Date.now();
    const res = await runSipp({ scenario, remote: `127.0.0.1:${silent}`, calls: 1, injectionFiles: [inf], timeoutMs: 400 }).done;
    assert.equal(res.timedOut, true);
    assert.equal(res.signal, 'SIGKILL');
    assert.ok(Date.now() - started < 3000);
  });
});
