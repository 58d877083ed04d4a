import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { FakeClock } from '../core/clock.ts';
import type { DeviceSession } from './device-flows.ts';
import { PendingQueries } from './pending-queries.ts';
import { createQueryRelay, withSn, type RelayedResponse } from './query-relay.ts';
import { DEFAULT_QUERY_TIMEOUTS } from './query-timeouts.ts';

const DEV = '34020000001320000001';
const TYPES = new Set(['Catalog', 'DeviceInfo']);
const query = (cmdType: string, sn: string): Buffer =>
  Buffer.concat([Buffer.from(`<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>${cmdType}</CmdType>\r\n<SN> ${sn} </SN>\r\n<DeviceID>${DEV}</DeviceID>\r\n<Name>`), Buffer.from([0xb6, 0xab]), Buffer.from('</Name>\r\n</Query>\r\n')]);

function setup() {
  const clock = new FakeClock(1_000_000);
  const pending = new PendingQueries({ clock, log: pino({ level: 'silent' }) });
  const sent: { targetId: string; body: Buffer }[] = [];
  const session = { deviceId: DEV } as DeviceSession;
  const relay = createQueryRelay({
    pending,
    timeouts: DEFAULT_QUERY_TIMEOUTS,
    sessionOf: () => session,
    send: async (_s, targetId, body) => void sent.push({ targetId, body }),
  });
  const out: [string, RelayedResponse][] = [];
  return { clock, pending, sent, relay, out, onResponse: (t: string, r: RelayedResponse) => void out.push([t, r]) };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('upstream query relay (GB/T 28181 §9.5)', () => {
  it('the SN element is rewritten byte for byte; the rest of the body (GB2312 bytes) is untouched', () => {
    const q = query('DeviceInfo', '7701');
    const out = withSn(q, '123456');
    assert.deepEqual(out, Buffer.from(q.toString('latin1').replace('<SN> 7701 </SN>', '<SN>123456</SN>'), 'latin1'));
    assert.ok(out.includes(Buffer.from([0xb6, 0xab])));
  });

  it('the device gets our SN; each Catalog page goes on with the upstream SN until SumNum items came', async () => {
    const t = setup();
    const done = t.relay.relay(DEV, query('Catalog', '7702'), TYPES, t.onResponse);
    await settle();
    const ourSn = /<SN>(\d+)<\/SN>/.exec(t.sent[0]?.body.toString('latin1') ?? '')?.[1] ?? '';
    assert.notEqual(ourSn, '7702');
    assert.equal(t.pending.size, 1);
    const page = (n: number) => ({ sn: ourSn, deviceId: DEV, sumNum: 3, items: Array.from({ length: n }, (_, i) => ({ deviceId: `c${i}` })) });
    assert.equal(t.pending.deliver(DEV, 'Catalog', ourSn, page(2)), 'matched');
    assert.equal(t.pending.deliver(DEV, 'Catalog', ourSn, page(1)), 'matched');
    assert.deepEqual(await done, { pages: 2, complete: true });
    assert.deepEqual(t.out.map(([c, r]) => [c, r.sn, (r['items'] as unknown[]).length]), [['Catalog', '7702', 2], ['Catalog', '7702', 1]]);
    assert.equal(t.pending.size, 0);
  });

  it('a device that never answers: nothing goes on, and nothing is kept past the wait (default deadline)', async () => {
    const t = setup();
    const done = t.relay.relay(DEV, query('DeviceInfo', '9'), TYPES, t.onResponse);
    await settle();
    assert.equal(t.pending.size, 1);
    t.clock.advance(DEFAULT_QUERY_TIMEOUTS.deviceInfoMs);
    assert.deepEqual(await done, { pages: 0, complete: false });
    assert.equal(t.pending.size, 0);
    assert.deepEqual(t.out, []);
  });

  it('what is not a relayed Query is refused before anything is sent', async () => {
    const t = setup();
    await assert.rejects(t.relay.relay(DEV, query('MobilePosition', '1'), TYPES, t.onResponse), /not a relayed query/);
    const control = Buffer.from(`<?xml version="1.0"?>\r\n<Control>\r\n<CmdType>DeviceControl</CmdType>\r\n<SN>1</SN>\r\n<DeviceID>${DEV}</DeviceID>\r\n</Control>\r\n`);
    await assert.rejects(t.relay.relay(DEV, control, TYPES, t.onResponse), /not a relayed query/);
    assert.equal(t.sent.length, 0);
  });
});
