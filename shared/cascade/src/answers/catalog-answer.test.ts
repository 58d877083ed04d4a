import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCatalogNotify, decodeCatalogResponse, parseManscdp, type CatalogItem } from '@vms/gb28181';
import { CascadeSendError, type CascadeError } from '../errors.ts';
import type { SharedChannel } from '../platform/platform.ts';
import { upstreamPlatform } from '../platform/platform.validate.ts';
import { buildCatalogAnswer, catalogItemsForPlatform, placeChannel } from './catalog-answer.ts';
import { catalogNotifyBody } from './notify-bodies.ts';
import { sendCatalogPages } from './send-pages.ts';

const LOCAL = '34020000002000000001';
const GROUP_215 = '34020000002150000001';
const NVR = '34020000001180000001';
const base = { serverId: '34010000002000000001', host: '10.1.2.3', localId: LOCAL } as const;
const flat = upstreamPlatform(base);
const grouped = upstreamPlatform({ ...base, catalog: { groupId: GROUP_215, groupName: '东区' } });

const cam = (n: number): CatalogItem => ({
  deviceId: `3402000000131000000${n}`,
  name: `cam${n}`,
  manufacturer: 'Hikvision',
  parentId: NVR,
  businessGroupId: '34020000002150000099',
  password: 'device-secret',
  status: 'ON',
  ptzType: '1',
});
const share = (n: number, extra: Partial<SharedChannel> = {}): SharedChannel => ({
  deviceId: NVR,
  channelId: `3402000000131000000${n}`,
  catalogGroupId: null,
  parentId: null,
  ...extra,
});
const lookup = (k: { channelId: string }): CatalogItem | undefined => [1, 2, 3].map(cam).find((c) => c.deviceId === k.channelId);

describe('catalog answer for an upstream platform', () => {
  it('flat platform: channels under our id, device password and foreign business group dropped', () => {
    const items = catalogItemsForPlatform(flat, [share(1)], lookup);
    assert.deepEqual(items, [
      { deviceId: '34020000001310000001', name: 'cam1', manufacturer: 'Hikvision', parentId: LOCAL, status: 'ON', ptzType: '1' },
    ]);
  });

  it('grouped platform: the group item first, channels under it with its business group; per-share overrides win', () => {
    const items = catalogItemsForPlatform(grouped, [share(1), share(2, { parentId: '34020000002160000007', catalogGroupId: '34020000002150000002' }), share(9)], lookup);
    assert.deepEqual(
      items.map((i) => [i.deviceId, i.name, i.parentId, i.businessGroupId]),
      [
        [GROUP_215, '东区', undefined, undefined],
        ['34020000001310000001', 'cam1', GROUP_215, GROUP_215],
        ['34020000001310000002', 'cam2', '34020000002160000007', '34020000002150000002'],
      ],
      'unknown channel 9 left out',
    );
  });

  it('pages repeat SN and the total SumNum, DeviceList Num is the page size, in the platform charset', () => {
    const items = catalogItemsForPlatform(grouped, [share(1), share(2), share(3)], lookup);
    const pages = buildCatalogAnswer(grouped, { sn: '17', deviceId: LOCAL }, items, { pageSize: 3 });
    assert.equal(pages.length, 2);
    const decoded = pages.map((b) => decodeCatalogResponse(parseManscdp(b)));
    assert.deepEqual(decoded.map((d) => [d.sn, d.deviceId, d.sumNum, d.items.length]), [['17', LOCAL, 4, 3], ['17', LOCAL, 4, 1]]);
    assert.match(pages[0]?.toString('latin1') ?? '', /^<\?xml version="1.0" encoding="GB2312"\?>\r\n<Response>\n<CmdType>Catalog<\/CmdType>\n<SN>17<\/SN>\n/);
    assert.match(pages[1]?.toString('latin1') ?? '', /<SumNum>4<\/SumNum>\n<DeviceList Num="1">/);
    // the Chinese group name went out as GB2312 bytes (东 = B6 AB)
    assert.ok(pages[0]?.includes(Buffer.from([0xb6, 0xab])));
    assert.deepEqual(buildCatalogAnswer(flat, { sn: '1', deviceId: LOCAL }, []).map((b) => decodeCatalogResponse(parseManscdp(b)).sumNum), [0], 'empty catalog: one page, SumNum 0');
  });

  it('catalog NOTIFY for one channel: our id, SumNum 1, the placed channel with its event', () => {
    const body = catalogNotifyBody(grouped, share(1), cam(1), 'OFF', 42);
    const n = decodeCatalogNotify(parseManscdp(body));
    assert.deepEqual([n.sn, n.deviceId, n.sumNum], ['42', LOCAL, 1]);
    assert.deepEqual(n.items, [{ ...placeChannel(grouped, share(1), cam(1)), event: 'OFF' }]);
    assert.equal(n.items[0]?.password, undefined);
  });
});

describe('sendCatalogPages', () => {
  const pages = [Buffer.from('p1'), Buffer.from('p2'), Buffer.from('p3')];

  it('sends in order, waiting for each, with the interval between pages only', async () => {
    const log: string[] = [];
    const r = await sendCatalogPages(pages, async (p, i) => void log.push(`send ${i} ${p.toString()}`), {
      intervalMs: 80,
      sleep: async (ms) => void log.push(`sleep ${ms}`),
    });
    assert.deepEqual(log, ['send 0 p1', 'sleep 80', 'send 1 p2', 'sleep 80', 'send 2 p3']);
    assert.deepEqual(r, { sent: 3, aborted: false });
  });

  it('stops at the first failed page with CascadeSendError (pages sent so far, cause kept)', async () => {
    const cause = new Error('408');
    await assert.rejects(
      sendCatalogPages(pages, async (_p, i) => {
        if (i === 1) throw cause;
      }, { sleep: async () => undefined }),
      (e: CascadeSendError) => e instanceof CascadeSendError && e.code === 'CASCADE_ERR_SEND' && e.sentPages === 1 && e.cause === cause,
    );
  });

  it('an abort (leadership lost) stops before the next page, also during the pause', async () => {
    const ac = new AbortController();
    const sent: number[] = [];
    const r = await sendCatalogPages(pages, async (_p, i) => void sent.push(i), {
      intervalMs: 10_000,
      signal: ac.signal,
      sleep: (ms, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason as Error));
          ac.abort();
        }),
    });
    assert.deepEqual([sent, r], [[0], { sent: 1, aborted: true }]);
    await assert.rejects(sendCatalogPages(pages, async () => undefined, { intervalMs: -1 }), (e: CascadeError) => e.code === 'CASCADE_ERR_ARGUMENT');
  });
});
