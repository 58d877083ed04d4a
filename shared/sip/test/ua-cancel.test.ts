// RFC 3261 §9: CANCEL from createUAC's AbortSignal, handled by the UAS stack (200 + 487).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SipStackError } from '../src/errors.ts';
import type { ServerContext } from '../src/ua/types.ts';
import { rawRequest, rawUdp, startStack } from './support/stack-fixtures.ts';

describe('CANCEL', () => {
  it('aborting a ringing INVITE sends CANCEL; the UAS answers 200 + 487 and aborts the handler signal', async () => {
    const platform = await startStack();
    const device = await startStack();
    try {
      let serverCtx: ServerContext | undefined;
      const handlerAborted = new Promise<unknown>((resolve) =>
        device.onRequest('INVITE', (_req, ctx) => {
          serverCtx = ctx;
          ctx.reply(180);
          ctx.signal.addEventListener('abort', () => resolve(ctx.signal.reason));
        }),
      );
      const ac = new AbortController();
      const provisional: number[] = [];
      const pending = platform.createUAC(
        { uri: `sip:dev@127.0.0.1:${device.port}`, body: 'v=0\r\n' },
        {
          signal: ac.signal,
          onProvisional: (r) => {
            provisional.push(r.status);
            if (r.status === 180) ac.abort();
          },
        },
      );
      await assert.rejects(pending, (e: unknown) => e instanceof SipStackError && e.code === 'SIP_ERR_CANCELLED');
      // Under load the INVITE may be retransmitted and the 180 resent with it: each copy is reported.
      assert.ok(provisional.length >= 1 && provisional.every((s) => s === 180), String(provisional));
      assert.equal(((await handlerAborted) as SipStackError).code, 'SIP_ERR_CANCELLED');
      assert.equal(serverCtx?.finalSent, true);
      assert.throws(() => serverCtx?.accept(), (e: unknown) => e instanceof SipStackError && e.code === 'SIP_ERR_INVALID_STATE');
      assert.equal(platform.stats().dialogs + device.stats().dialogs, 0);
    } finally {
      await platform.close();
      await device.close();
    }
  });

  it('waits for a provisional before sending CANCEL (§9.1)', async () => {
    const platform = await startStack();
    const dev = await rawUdp();
    try {
      const ac = new AbortController();
      ac.abort();
      const outcome = platform.createUAC({ uri: `sip:dev@127.0.0.1:${dev.port}` }, { signal: ac.signal }).then(
        () => undefined,
        (e: unknown) => e,
      );
      const invite = await dev.next();
      // Only INVITE retransmissions (Timer A) until a provisional arrives: no CANCEL yet.
      for (;;) {
        const more = await dev.next(150).catch(() => undefined);
        if (more === undefined) break;
        assert.match(more, /^INVITE /, 'no CANCEL before a provisional');
      }
      const head = invite.split('\r\n\r\n')[0]!.split('\r\n').filter((l) => /^(Via|From|To|Call-ID|CSeq):/.test(l));
      await dev.send(['SIP/2.0 100 Trying', ...head, 'Content-Length: 0', '', ''].join('\r\n'), platform.port);
      const cancel = await dev.nextMatching(/^CANCEL /);
      const branch = (s: string): string | undefined => /branch=([^;\r\n]+)/.exec(s)?.[1];
      assert.equal(branch(cancel), branch(invite), 'same branch as the INVITE (§9.1)');
      assert.match(cancel, /CSeq: 1 CANCEL\r\n/);
      const headOf = (s: string): string[] => s.split('\r\n\r\n')[0]!.split('\r\n').filter((l) => /^(Via|From|To|Call-ID|CSeq):/.test(l));
      await dev.send(['SIP/2.0 200 OK', ...headOf(cancel), 'Content-Length: 0', '', ''].join('\r\n'), platform.port);
      const to487 = headOf(invite).map((l) => (l.startsWith('To:') ? `${l};tag=dev487` : l));
      await dev.send(['SIP/2.0 487 Request Terminated', ...to487, 'Content-Length: 0', '', ''].join('\r\n'), platform.port);
      assert.match(await dev.nextMatching(/^ACK /), /CSeq: 1 ACK\r\n/, 'the transaction ACKs the 487');
      const err = await outcome;
      assert.ok(err instanceof SipStackError && err.code === 'SIP_ERR_CANCELLED');
    } finally {
      dev.close();
      await platform.close();
    }
  });

  it('CANCEL for an unknown transaction gets 481', async () => {
    const device = await startStack();
    const dev = await rawUdp();
    try {
      await dev.send(rawRequest({ method: 'CANCEL', port: device.port, viaPort: dev.port }), device.port);
      assert.match(await dev.next(), /^SIP\/2\.0 481 /);
    } finally {
      dev.close();
      await device.close();
    }
  });
});
