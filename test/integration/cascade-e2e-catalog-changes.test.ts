// End-to-end (SPEC CASC-3): channel changes a device reports on a non-leader instance — by its Catalog
// Notify (ADD / UPDATE / DEL as it labels them) or found by a catalog sync (new → ADD, changed →
// UPDATE, gone from a complete catalog → DEL) — reach the upstream as catalog NOTIFYs from the leader,
// for shared channels only, across the Redis cascade bus. The device is a hand-driven GB28181 device on
// @vms/sip in this process, so the test decides exactly what its catalog says.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCatalogNotify, buildCatalogResponsePages, parseManscdp, type CatalogItem } from '@vms/gb28181';
import { createSipStack, type SipStack } from '@vms/sip';
import { waitFor } from '@vms/harness';
import { api, MANSCDP, SERVER_ID, shares, useCascadeCluster, type Instance, type Notified } from './cascade-cluster.ts';

const DEVICE = '34020000001320000801';
const [C1, C2, C3, C4] = ['34020000001310000801', '34020000001310000802', '34020000001310000803', '34020000001310000804'];
const REALM = SERVER_ID.slice(0, 10);

const item = (deviceId: string, name: string, event?: string): CatalogItem => ({
  deviceId,
  name,
  manufacturer: 'test',
  model: 'raw',
  owner: 'o',
  civilCode: REALM,
  address: 'a',
  parental: '0',
  parentId: DEVICE,
  registerWay: '1',
  secrecy: '0',
  status: 'ON',
  ...(event === undefined ? {} : { event }),
});

/** A GB28181 device on our own SIP stack: registers, answers catalog queries with `catalog`, sends Catalog Notifies. */
class RawDevice {
  catalog: CatalogItem[] = [];
  #sn = 100;
  private constructor(
    readonly stack: SipStack,
    readonly instance: Instance,
  ) {}

  static async register(instance: Instance): Promise<RawDevice> {
    const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'], userAgent: 'raw-device' });
    const d = new RawDevice(stack, instance);
    stack.onRequest('MESSAGE', (req, ctx) => {
      ctx.reply(200);
      const msg = parseManscdp(req.body);
      if (msg.root === 'Query' && msg.cmdType === 'Catalog') {
        for (const page of buildCatalogResponsePages({ sn: msg.sn, deviceId: DEVICE }, d.catalog, { charset: 'UTF-8' })) void d.send(page);
      }
    });
    const res = await stack.request({
      method: 'REGISTER',
      uri: `sip:${SERVER_ID}@${REALM}`,
      headers: { From: `<sip:${DEVICE}@${REALM}>`, To: `<sip:${DEVICE}@${REALM}>`, Contact: `<sip:${DEVICE}@127.0.0.1:${stack.port}>`, Expires: '3600' },
      target: { host: '127.0.0.1', port: instance.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200, 'REGISTER accepted');
    return d;
  }

  async send(body: Buffer): Promise<number> {
    const res = await this.stack.request({
      method: 'MESSAGE',
      uri: `sip:${SERVER_ID}@${REALM}`,
      headers: { From: `<sip:${DEVICE}@${REALM}>`, To: `<sip:${SERVER_ID}@${REALM}>` },
      body,
      contentType: MANSCDP,
      target: { host: '127.0.0.1', port: this.instance.sipPort, transport: 'udp' },
    });
    return res.status;
  }

  notify(items: CatalogItem[]): Promise<number> {
    return this.send(buildCatalogNotify({ sn: String(++this.#sn), deviceId: DEVICE, sumNum: items.length, items }, { charset: 'UTF-8' }));
  }

  close(): Promise<void> {
    return this.stack.close();
  }
}

/** `event channelId name` of every catalog NOTIFY item, in arrival order. */
function seen(notified: readonly Notified[]): string[] {
  return notified
    .filter((n) => n.kind === 'Catalog')
    .flatMap((n) =>
      [...n.body.matchAll(/<Item>([\s\S]*?)<\/Item>/g)].map((m) => {
        const body = m[1] ?? '';
        const tag = (t: string): string => new RegExp(`<${t}>([^<]*)</${t}>`).exec(body)?.[1] ?? '-';
        return `${tag('Event')} ${tag('DeviceID')} ${tag('Name')}`;
      }),
    );
}

describe('catalog changes of shared channels reach the upstream (CASC-3)', () => {
  const cluster = useCascadeCluster();

  it('sync ADD, notify ADD / UPDATE / DEL, resync UPDATE / DEL — from the leader, shared channels only', async () => {
    const s = await cluster.database('casc_changes', shares(DEVICE, [C1, C2, C3]));
    const leader = await cluster.instance(s, 'casc-chg-a', { cascade: true });
    const owner = await cluster.instance(s, 'casc-chg-b');
    await cluster.registered(leader);
    const notified = await cluster.subscribe(leader, 'Catalog');
    const device = await RawDevice.register(owner);
    cluster.track(() => device.close());
    const expectSeen = async (want: string[], what: string): Promise<void> => {
      await waitFor(() => seen(notified).length >= want.length, { timeoutMs: 8000, intervalMs: 20, description: what });
      await new Promise((r) => setTimeout(r, 300)); // nothing more (C4's changes in particular) arrives
      assert.deepEqual(seen(notified).sort(), [...want].sort(), what); // events of different channels may cross on the bus
      notified.length = 0;
    };

    // 1. first sync: C1, C2 are new and shared → ADD; C4 is new but not shared → nothing
    device.catalog = [item(C1, 'one'), item(C2, 'two'), item(C4, 'four')];
    const sync = await api(owner, `/vms/device/catalog/sync?deviceId=${DEVICE}`, { method: 'POST' });
    assert.equal(sync.json.success, true, JSON.stringify(sync.json));
    await cluster.channelsStored(owner, DEVICE, 3);
    await expectSeen([`ADD ${C1} one`, `ADD ${C2} two`], 'ADD after the first sync');

    // 2. the device's own Catalog Notify on the non-leader: its events, passed on
    assert.equal(await device.notify([item(C3, 'three', 'ADD'), item(C2, 'two renamed', 'UPDATE'), item(C1, 'one', 'DEL'), item(C4, 'four', 'UPDATE')]), 200);
    await expectSeen([`ADD ${C3} three`, `UPDATE ${C2} two renamed`, `DEL ${C1} -`], 'notify events');

    // 3. a complete resync: C3 is gone (DEL), C2 changed again (UPDATE), C4 unshared (nothing)
    device.catalog = [item(C2, 'two again'), item(C4, 'four')];
    assert.equal((await api(leader, `/vms/device/catalog/sync?deviceId=${DEVICE}`, { method: 'POST' })).json.success, true, 'sync routed to the owner');
    await expectSeen([`UPDATE ${C2} two again`, `DEL ${C3} -`], 'UPDATE / DEL after the resync');
  });
});
