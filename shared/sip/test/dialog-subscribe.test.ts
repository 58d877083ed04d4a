// RFC 6665 SUBSCRIBE dialogs (GB28181 catalog / alarm / position subscriptions) between two stacks.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { it } from 'node:test';
import type { Dialog } from '../src/dialog/dialog.ts';
import type { SipRequest } from '../src/message/types.ts';
import { startStack } from './support/stack-fixtures.ts';

it('SUBSCRIBE → 200 dialog, NOTIFYs in dialog, re-SUBSCRIBE, terminated NOTIFY ends it', async () => {
  const upper = await startStack();
  const lower = await startStack();
  try {
    const notifier = new Promise<Dialog>((resolve) =>
      lower.onRequest('SUBSCRIBE', (req, ctx) => resolve(ctx.accept({ headers: { Expires: req.headers.get('Expires') ?? '3600' } }))),
    );
    const { dialog: sub, response } = await upper.createUAC({
      method: 'SUBSCRIBE',
      uri: `sip:34020000002000000002@127.0.0.1:${lower.port}`,
      headers: { From: '<sip:34020000002000000001@3402000000>', Event: 'Catalog;id=1', Expires: 3600 },
      body: '<?xml version="1.0"?><Query><CmdType>Catalog</CmdType><SN>1</SN></Query>',
      contentType: 'Application/MANSCDP+xml',
    });
    assert.equal(response.status, 200);
    assert.equal(sub.kind, 'subscribe');
    const n = await notifier;

    const notifies: SipRequest[] = [];
    sub.on('notify', (req, ctx) => {
      notifies.push(req);
      ctx.reply(200);
    });
    const r1 = await n.request('NOTIFY', { headers: { Event: 'Catalog;id=1', 'Subscription-State': 'active;expires=3600' }, body: '<Notify/>' });
    assert.equal(r1.status, 200);
    assert.equal(notifies[0]?.headers.get('CSeq'), '1 NOTIFY');
    assert.match(notifies[0]?.headers.get('Contact') ?? '', /^<sip:34020000002000000002@127\.0\.0\.1:\d+>$/);

    // Refresh from the subscriber; the notifier has no 'subscribe' listener → default 200 with Expires.
    const refresh = await sub.request('SUBSCRIBE', { headers: { Event: 'Catalog;id=1', Expires: 1800 } });
    assert.equal(refresh.status, 200);
    assert.equal(refresh.headers.get('Expires'), '1800');
    assert.equal(refresh.headers.get('CSeq'), '2 SUBSCRIBE');

    const ended = once(sub, 'terminated');
    await n.request('NOTIFY', { headers: { Event: 'Catalog;id=1', 'Subscription-State': 'terminated;reason=timeout' } });
    assert.deepEqual(await ended, ['subscription-terminated']);
    assert.equal(notifies.length, 2);
    n.destroy().catch(() => undefined);
    assert.equal(n.terminated, true);
  } finally {
    await upper.close();
    await lower.close();
  }
});

it('un-SUBSCRIBE (Expires: 0) ends the subscription on both sides', async () => {
  const upper = await startStack();
  const lower = await startStack();
  try {
    const notifier = new Promise<Dialog>((resolve) => lower.onRequest('SUBSCRIBE', (_req, ctx) => resolve(ctx.accept())));
    const { dialog: sub } = await upper.createUAC({ method: 'SUBSCRIBE', uri: `sip:x@127.0.0.1:${lower.port}`, headers: { Event: 'Alarm', Expires: 600 } });
    const n = await notifier;
    const notifierEnded = once(n, 'terminated');
    const res = await sub.request('SUBSCRIBE', { headers: { Event: 'Alarm', Expires: 0 } });
    assert.equal(res.status, 200);
    assert.equal(sub.terminated, true);
    assert.deepEqual(await notifierEnded, ['subscription-terminated']);
    assert.equal(upper.stats().dialogs + lower.stats().dialogs, 0);
  } finally {
    await upper.close();
    await lower.close();
  }
});
