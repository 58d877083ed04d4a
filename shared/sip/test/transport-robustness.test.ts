// Whatever arrives on the sockets, the stack answers or drops it and keeps running (seeded, so a
// failure reproduces). Complements the parser fuzzing: here the whole inbound path runs —
// Via stamping, transaction matching, CANCEL/ACK handling, dialog lookup, handlers.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { rawRequest, rawTcp, rawUdp, startStack } from './support/stack-fixtures.ts';

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SNIPPETS = ['\r\n', '\r\n\r\n', ';tag=', ';branch=z9hG4bK1', ';rport', ';received=', 'Contact: <sip:x@[::1]>\r\n', 'To: <sip:a@b>;tag=\r\n', 'CSeq: 4294967296 INVITE\r\n', '\x00', '\xff', ',', '<', '>', '"', 'Content-Length: 9999\r\n', 'Via: SIP/2.0/UDP\r\n'];

function mutate(src: string, rnd: () => number): Buffer {
  let s = src;
  for (let r = 1 + Math.floor(rnd() * 3); r > 0; r--) {
    const at = Math.floor(rnd() * (s.length + 1));
    const op = rnd();
    if (op < 0.3) s = s.slice(0, at) + (SNIPPETS[Math.floor(rnd() * SNIPPETS.length)] ?? '') + s.slice(at);
    else if (op < 0.55) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(rnd() * 20));
    else if (op < 0.8) s = s.slice(0, at) + String.fromCharCode(Math.floor(rnd() * 256)) + s.slice(at + 1);
    else s = s.slice(0, at);
  }
  return Buffer.from(s, 'latin1');
}

it('survives 3000 mutated datagrams and 150 mutated TCP streams, then still answers', async () => {
  const stack = await startStack();
  for (const m of ['INVITE', 'MESSAGE', 'REGISTER', 'SUBSCRIBE', 'NOTIFY', 'INFO']) {
    stack.onRequest(m, (req, ctx) => (m === 'INVITE' || m === 'SUBSCRIBE' ? ctx.accept({ body: 'v=0\r\n' }) : ctx.reply(200, { body: req.body })));
  }
  const dev = await rawUdp();
  const rnd = prng(0x28181);
  const seeds = ['INVITE', 'MESSAGE', 'REGISTER', 'ACK', 'CANCEL', 'BYE', 'NOTIFY', 'SUBSCRIBE'].map((method) =>
    rawRequest({ method, port: stack.port, viaPort: dev.port, branch: 'z9hG4bKfuzz', callId: 'fuzz-call', body: method === 'INVITE' ? 'v=0\r\ns=Play\r\n' : '' }),
  );
  seeds.push('SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKx\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:c@d>;tag=2\r\nCall-ID: fuzz-call\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n');
  try {
    for (let i = 0; i < 3000; i++) {
      await dev.send(mutate(seeds[i % seeds.length] ?? '', rnd), stack.port);
      if (i % 200 === 0) await sleep(5);
    }
    for (let i = 0; i < 150; i++) {
      const c = await rawTcp(stack.port);
      const seed = (seeds[i % seeds.length] ?? '').replace('SIP/2.0/UDP', 'SIP/2.0/TCP');
      await c.write(Buffer.concat([mutate(seed, rnd), mutate(seed, rnd)])).catch(() => undefined);
      c.close();
    }
    await sleep(100);
    const probe = await rawUdp();
    try {
      await probe.send(rawRequest({ method: 'OPTIONS', port: stack.port, viaPort: probe.port }), stack.port);
      assert.match(await probe.next(), /^SIP\/2\.0 200 OK/);
    } finally {
      probe.close();
    }
    const st = stack.stats();
    assert.ok(st.parseErrors > 0 && st.messagesIn > 0, JSON.stringify(st));
  } finally {
    dev.close();
    await stack.close();
  }
});
