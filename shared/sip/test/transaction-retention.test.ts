// What a Completed non-INVITE server transaction keeps for Timer J (RFC 3261 §17.2.2: 32 s over UDP):
// only what repeats its final response. A REGISTER storm of N/s holds 32·N of them; whatever they
// keep outlives V8's young generation, and was most of the 10 KB RSS per registered device of
// issue 11. Checked with WeakRefs and a full GC: the request and the response must be collectable
// while the transaction still answers retransmissions.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { NonInviteServerTransaction } from '../src/transaction/server-non-invite.ts';
import type { SipRequest, SipResponse } from '../src/message/types.ts';
import type { SipStack } from '../src/ua/stack.ts';
import { rawUdp, startStack } from './support/stack-fixtures.ts';
import { makeRequest, makeResponse, recordingEnv, recordingTu } from './support/transaction-fixtures.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Full collections, with turns of the event loop between them (WeakRefs clear after the job that made them). */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
}

/** Strings in the live heap that `match` (a heap snapshot, parsed). */
function heapStringsWith(match: (s: string) => boolean): number {
  const file = writeHeapSnapshot(join(mkdtempSync(join(tmpdir(), 'sip-retention-')), 'h.heapsnapshot'));
  try {
    const snap = JSON.parse(readFileSync(file, 'utf8')) as { strings: string[] };
    return snap.strings.filter(match).length;
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

describe('Completed non-INVITE server transaction (§17.2.2) keeps only its final response bytes', () => {
  it('the request and the response can be collected; a retransmitted request still gets the final again', async () => {
    const { env } = recordingEnv();
    let resent = 0;
    let prepared: number | undefined;
    const tx = ((): { tx: NonInviteServerTransaction; req: WeakRef<SipRequest>; res: WeakRef<SipResponse> } => {
      const req = makeRequest('REGISTER');
      const res = makeResponse(req, 200);
      const t = new NonInviteServerTransaction(req, { ...env, send: () => {}, prepare: (m) => ((prepared = (m as SipResponse).status), () => void resent++) }, recordingTu().tu);
      t.respond(res);
      return { tx: t, req: new WeakRef(req), res: new WeakRef(res) };
    })();
    await collect();
    assert.equal(tx.tx.currentState, 'completed');
    assert.equal(prepared, 200);
    assert.equal(tx.req.deref(), undefined, 'the request is not kept');
    assert.equal(tx.res.deref(), undefined, 'the response object is not kept (its prepared bytes are)');
    tx.tx.receiveRequest(makeRequest('REGISTER'));
    assert.equal(resent, 1);
  });

  describe('through the UA over UDP', () => {
    let server: SipStack;
    before(async () => {
      server = await startStack({ timers: { T1: 500, T2: 4000, T4: 5000 } }); // RFC 3261 values: Timer J = 32 s outlasts the heap snapshot
    });
    after(async () => {
      await server.close();
    });

    it('keeps neither the request nor its ServerCtx; a retransmission gets the same bytes', async () => {
      let seen: WeakRef<SipRequest> | undefined;
      let ctxRef: WeakRef<object> | undefined;
      server.onRequest('REGISTER', (req, ctx) => {
        seen = new WeakRef(req);
        ctxRef = new WeakRef(ctx);
        ctx.reply(200, { headers: { Expires: '3600' } });
      });
      const device = await rawUdp();
      try {
        // The datagram is assembled from bytes: no string of this process holds its text, so one found
        // in the heap afterwards was made by the server from the datagram.
        const marker = randomBytes(8).toString('hex');
        const head = [
          `REGISTER sip:34020000002000000001@3402000000 SIP/2.0`,
          `Via: SIP/2.0/UDP 127.0.0.1:${device.port};rport;branch=z9hG4bK-retention-1`,
          'From: <sip:34020000001320000001@3402000000>;tag=r1',
          'To: <sip:34020000001320000001@3402000000>',
          'Call-ID: retention-1@127.0.0.1',
          'CSeq: 1 REGISTER',
          `Contact: <sip:34020000001320000001@127.0.0.1:${device.port}>`,
          'Max-Forwards: 70',
          'User-Agent: ', // + marker: in no response, so in the heap only if the request text is
        ].join('\r\n');
        const register = Buffer.concat([Buffer.from(head), Buffer.from(marker), Buffer.from('\r\nExpires: 3600\r\nContent-Length: 0\r\n\r\n')]);
        await device.send(register, server.port);
        const first = await device.nextMatching(/^SIP\/2\.0 200/);
        await collect();
        assert.equal(server.stats().serverTransactions, 1, 'still in Completed (Timer J)');
        assert.equal(seen?.deref(), undefined, 'the request is not kept');
        assert.equal(ctxRef?.deref(), undefined, 'the ServerCtx is not kept');
        assert.equal(heapStringsWith((t) => t.includes(marker) && t.includes('CSeq: 1 REGISTER')), 0, 'no string keeps the request text (a slice in the key or a closure would)');
        await device.send(register, server.port); // a retransmission (same branch)
        assert.equal(await device.nextMatching(/^SIP\/2\.0 200/), first, 'the very same response');
      } finally {
        device.close();
      }
    });
  });
});
