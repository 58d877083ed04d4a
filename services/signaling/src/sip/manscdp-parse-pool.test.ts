import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { decodeManscdpCommand, parseManscdp } from '@vms/gb28181';
import { pino } from 'pino';
import { createManscdpParsePool, DEFAULT_PARSE_LIMITS, ParseQueueFullError, ParseRefusedError } from './manscdp-parse-pool.ts';

const log = pino({ level: 'silent' });

function catalog(items: number, charset: 'UTF-8' | 'GB2312' = 'UTF-8'): Buffer {
  const list = Array.from({ length: items }, (_, i) => `<Item><DeviceID>340200000013100${String(i).padStart(5, '0')}</DeviceID><Name>通道${i}</Name><Status>ON</Status></Item>`).join('');
  const xml = `<?xml version="1.0" encoding="${charset}"?>\r\n<Response><CmdType>Catalog</CmdType><SN>17</SN><DeviceID>34020000001320000001</DeviceID><SumNum>${items}</SumNum><DeviceList Num="${items}">${list}</DeviceList></Response>`;
  return charset === 'UTF-8' ? Buffer.from(xml) : iconv.encode(xml, 'gb2312');
}

describe('MANSCDP decode off the main thread', () => {
  const pool = createManscdpParsePool(DEFAULT_PARSE_LIMITS, log);
  after(() => pool.close());

  it('gives what the main-thread decoder gives, prototypes and charsets included', async () => {
    for (const body of [catalog(600), catalog(3, 'GB2312'), Buffer.from('<?xml version="1.0"?><Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>34020000001320000001</DeviceID><Status>OK</Status></Notify>')]) {
      const here = parseManscdp(body);
      const there = await pool.parse(body);
      assert.deepStrictEqual(there.msg, here);
      assert.deepStrictEqual(there.cmd, decodeManscdpCommand(here));
    }
  });

  it('refuses what the decoder refuses, with its reason, and goes on working', async () => {
    await assert.rejects(pool.parse(Buffer.from('<Response><CmdType>Catalog</CmdType>')), ParseRefusedError);
    await assert.rejects(pool.parse(Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><Notify/>')), ParseRefusedError);
    assert.equal((await pool.parse(catalog(2))).cmd.kind, 'Response/Catalog');
  });

  it('does not alter the caller\'s bytes (a view into a larger buffer)', async () => {
    const big = Buffer.concat([Buffer.from('HEAD'), catalog(5), Buffer.from('TAIL')]);
    const view = big.subarray(4, big.length - 4);
    const before = Buffer.from(big);
    assert.equal((await pool.parse(view)).cmd.kind, 'Response/Catalog');
    assert.deepEqual(big, before);
  });

  it('refuses at once when the queue in front of the threads is full', async () => {
    const small = createManscdpParsePool({ threads: 1, maxQueued: 2, timeoutMs: 5000 }, log);
    try {
      const body = catalog(600);
      await small.parse(catalog(1)); // the thread has started: from here one body decodes, the rest queue
      const accepted = [small.parse(body), small.parse(body), small.parse(body)]; // one decoding, two queued
      await assert.rejects(small.parse(body), ParseQueueFullError);
      assert.equal(small.pending, 3);
      for (const r of await Promise.all(accepted)) assert.equal(r.cmd.kind, 'Response/Catalog');
      assert.equal(small.pending, 0);
    } finally {
      await small.close();
    }
  });

  it('replaces a worker whose decode runs past the deadline and serves the next body', async () => {
    const hasty = createManscdpParsePool({ threads: 1, maxQueued: 8, timeoutMs: 1 }, log);
    try {
      await assert.rejects(hasty.parse(catalog(600)), /exceeded 1 ms/);
    } finally {
      await hasty.close();
    }
    const patient = createManscdpParsePool({ threads: 1, maxQueued: 8, timeoutMs: 5000 }, log);
    try {
      assert.equal((await patient.parse(catalog(1))).cmd.kind, 'Response/Catalog');
    } finally {
      await patient.close();
    }
  });

  it('fails what is waiting when closed, and refuses afterwards', async () => {
    const p = createManscdpParsePool({ threads: 1, maxQueued: 8, timeoutMs: 5000 }, log);
    const waiting = [p.parse(catalog(600)), p.parse(catalog(600))].map((w) => assert.rejects(w, /closed/));
    await p.close();
    await Promise.all(waiting);
    await assert.rejects(p.parse(catalog(1)), /closed/);
  });
});
