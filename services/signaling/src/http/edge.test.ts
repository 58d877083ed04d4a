import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { Client } from 'undici';
import { FORWARD_HEADERS } from '@vms/cluster';
import { buildFixture, CH, DEV, DEV_OFFLINE } from '../../test/http/fixture.ts';
import { OwnerNodeOfflineError } from '../errors/catalog.ts';
import { matchEdgeRequest } from './edge.ts';
import type { EdgeRequest } from './handler.types.ts';

const LIMIT = 1024;

describe('matchEdgeRequest: what the edge may consider', () => {
  const match = (method: string, url: string, headers: Record<string, string | string[]> = {}) => {
    const m = matchEdgeRequest(method, url, headers, LIMIT);
    return m === null ? null : `${m.route.id} ${m.key}`;
  };

  it('routes named by deviceId or channelId, in either path form, with or without a body of known length', () => {
    assert.equal(match('GET', `/vms/device/info?deviceId=${DEV}`), `device.info ${DEV}`);
    assert.equal(match('GET', `/blade-iot/vms/device/status?x=1&deviceId=${DEV}`), `device.status ${DEV}`);
    assert.equal(match('GET', `/vms/device/catalog/sync?deviceId=${DEV}`), `catalog.progress ${DEV}`);
    assert.equal(match('POST', `/vms/device/catalog/sync?deviceId=${DEV}`, { 'content-length': '0' }), `catalog.sync ${DEV}`);
    assert.equal(match('POST', `/vms/device/control?deviceId=${DEV}&action=reboot`, { 'content-length': String(LIMIT) }), `device.control ${DEV}`);
    assert.equal(match('POST', `/vms/ptz/control?command=left&channelId=${CH}&speed=5`), `ptz.control ${CH}`);
    assert.equal(match('GET', `/blade-iot/vms/snapshot?channelId=${CH}`), `snapshot ${CH}`);
  });

  it('leaves everything else to fastify', () => {
    const none: [string, string, Record<string, string | string[]>?][] = [
      ['GET', '/vms/devices'],
      ['GET', '/vms/device/info'],
      ['GET', `/vms/device/info/?deviceId=${DEV}`],
      ['HEAD', `/vms/device/info?deviceId=${DEV}`],
      ['POST', `/vms/device/info?deviceId=${DEV}`],
      ['POST', `/vms/ptz/control?deviceId=${DEV}&command=left`], // routed by channelId
      ['GET', `/vms/record/result?sn=12`], // by SN, session: Redis lookups
      ['POST', `/vms/play/stop?sessionId=abc`],
      ['GET', `/vms/device/info?deviceId=${DEV}&deviceId=${DEV}`],
      ['GET', '/vms/device/info?deviceId=3402000000132000000'],
      ['GET', '/vms/device/info?deviceId=3402000000132000000x'],
      ['GET', '/vms/device/info?deviceId='],
      ['GET', `/vms/device/info?deviceId=${DEV}#frag`],
      ['GET', `/blade-iotx/vms/device/info?deviceId=${DEV}`],
      ['GET', `/vms/device/info?deviceId=${DEV}`, { [FORWARD_HEADERS.marker]: 'node-b' }],
      ['POST', `/vms/device/control?deviceId=${DEV}&action=reboot`, { 'transfer-encoding': 'chunked' }],
      ['POST', `/vms/device/control?deviceId=${DEV}&action=reboot`, { 'content-length': String(LIMIT + 1) }],
      ['POST', `/vms/device/control?deviceId=${DEV}&action=reboot`, { 'content-length': '-1' }],
      ['POST', `/vms/device/control?deviceId=${DEV}&action=reboot`, { 'content-length': ['1', '1'] }],
    ];
    for (const [method, url, headers] of none) assert.equal(match(method, url, headers), null, `${method} ${url} ${JSON.stringify(headers ?? {})}`);
  });
});

describe('the HTTP edge in front of fastify', () => {
  const closers: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of closers.reverse()) await c();
  });

  async function start(routing: (r: EdgeRequest) => boolean) {
    const offered: EdgeRequest[] = [];
    let hookRuns = 0;
    const f = await buildFixture({
      // fastify's path: the hook refuses DEV as the owner-routing hook would for a dead owner
      ownerRouting: async ({ request }) => {
        hookRuns++;
        if ((request.query as Record<string, string>).deviceId === DEV) throw new OwnerNodeOfflineError(DEV, 'node-z');
        return 'local';
      },
      edgeRouting: (r) => {
        offered.push(r);
        return routing(r);
      },
    });
    await f.app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => f.app.close());
    const url = `http://127.0.0.1:${(f.app.server.address() as AddressInfo).port}`;
    const get = async (path: string, token: string, init: RequestInit = {}) => {
      const res = await fetch(`${url}${path}`, { ...init, headers: { 'blade-auth': `bearer ${token}`, ...(init.headers ?? {}) } });
      return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
    };
    return { ...f, url, get, offered, hookRuns: () => hookRuns };
  }

  it('offers a request only once its token verified; what it takes is answered as the routing says', async () => {
    const owner = Buffer.from([0xc4, 0xe3, 0xba, 0xc3]);
    const bodies: (Buffer | null)[] = [];
    const f = await start((r) => {
      void r.body().then((b) => {
        bodies.push(b);
        r.answer(202, 'text/x-owner; charset=gbk', owner);
      });
      return true;
    });
    const token = await f.token();
    const first = await f.get(`/vms/device/info?deviceId=${DEV_OFFLINE}`, token);
    assert.equal(f.offered.length, 0, 'the token was not verified yet: fastify ran it');
    assert.equal(first.status, 200);
    const second = await f.get(`/vms/device/info?deviceId=${DEV_OFFLINE}`, token);
    assert.deepEqual([second.status, second.type, second.bytes], [202, 'text/x-owner; charset=gbk', owner]);
    const post = await f.get(`/vms/device/control?deviceId=${DEV_OFFLINE}&action=reboot`, token, { method: 'POST', body: '{"a": 1 }', headers: { 'content-type': 'application/json' } });
    assert.equal(post.status, 202);
    assert.deepEqual(bodies.map((b) => b?.toString() ?? null), [null, '{"a": 1 }'], 'the body as received');
    assert.deepEqual(f.offered.map((r) => [r.route.id, r.key, r.method]), [['device.info', DEV_OFFLINE, 'GET'], ['device.control', DEV_OFFLINE, 'POST']]);
    assert.equal(f.offered[1]?.url, `/vms/device/control?deviceId=${DEV_OFFLINE}&action=reboot`);
  });

  it('a refusal at the edge is the envelope fastify answers for the same error', async () => {
    const f = await start((r) => {
      r.fail(new OwnerNodeOfflineError(r.key, 'node-z'));
      return true;
    });
    const token = await f.token();
    const viaFastify = await f.get(`/vms/device/info?deviceId=${DEV}`, token);
    assert.equal(f.hookRuns(), 1);
    const atEdge = await f.get(`/vms/device/info?deviceId=${DEV}`, token);
    assert.equal(f.hookRuns(), 1, 'the second one never reached fastify');
    assert.deepEqual([atEdge.status, atEdge.type, atEdge.bytes], [viaFastify.status, viaFastify.type, viaFastify.bytes]);
    assert.equal(JSON.parse(atEdge.bytes.toString()).code, 4603);
  });

  it('a request invalid by schema gets the same answer whether fastify refuses it here or the edge forwards it to the owner', async () => {
    const owner = await buildFixture();
    await owner.app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => owner.app.close());
    const ownerUrl = `http://127.0.0.1:${(owner.app.server.address() as AddressInfo).port}`;
    const f = await start((r) => {
      // a minimal forward: the request as received, the owner's answer unchanged (ROUTE-3, ROUTE-4)
      void (async () => {
        const res = await fetch(`${ownerUrl}${r.url}`, { method: r.method, headers: { 'blade-auth': String(r.headers['blade-auth']) } });
        r.answer(res.status, res.headers.get('content-type'), Buffer.from(await res.arrayBuffer()));
      })();
      return true;
    });
    const token = await f.token();
    const path = `/vms/ptz/control?channelId=${CH}&command=jump`;
    const here = await f.get(path, token, { method: 'POST' }); // token not verified yet: fastify refuses it here
    assert.equal(f.offered.length, 0);
    const forwarded = await f.get(path, token, { method: 'POST' }); // the edge takes it; the owner refuses it
    assert.equal(f.offered.length, 1);
    assert.deepEqual([forwarded.status, forwarded.bytes.toString()], [here.status, here.bytes.toString()]);
    assert.deepEqual(JSON.parse(here.bytes.toString()), {
      code: 400,
      success: false,
      msg: 'bad parameter command: must be one of left, right, up, down, upleft, upright, downleft, downright, zoomin, zoomout, stop',
      data: null,
    });
  });

  it('declined or throwing: fastify runs the request', async () => {
    let mode: 'decline' | 'throw' = 'decline';
    const f = await start(() => {
      if (mode === 'throw') throw new Error('bug in the routing');
      return false;
    });
    const token = await f.token();
    const code = async (): Promise<number> => JSON.parse((await f.get(`/vms/device/info?deviceId=${DEV_OFFLINE}`, token)).bytes.toString()).code;
    assert.equal(await code(), 4601, 'the handler answers: the device is offline');
    assert.equal(await code(), 4601);
    mode = 'throw';
    assert.equal(await code(), 4601);
    assert.equal(f.offered.length, 2);
    assert.equal(f.hookRuns(), 3);
  });

  it('odd requests never crash it: each gets an answer, and only well-formed routed ones are offered', async () => {
    const f = await start((r) => {
      r.fail(new OwnerNodeOfflineError(r.key, 'node-z'));
      return true;
    });
    const token = await f.token();
    await f.get(`/vms/device/info?deviceId=${DEV_OFFLINE}`, token); // verified from now on
    const client = new Client(f.url, { pipelining: 1 });
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = [`deviceId=${DEV_OFFLINE}`, `&deviceId=${DEV}`, 'deviceId=', DEV, '%', '%zz', '%00', '&', '=', '+', '%E4%BD%A0', 'channelId=', '?', '#', ';', '/', '..', 'x'.repeat(300)];
    const paths = ['/vms/device/info', '/blade-iot/vms/device/info', '/vms/device/control', '/vms/ptz/control', '/vms/device/info/', '//vms/device/info'];
    const statuses = new Set<number>();
    for (let i = 0; i < 300; i++) {
      let query = '';
      for (let k = rnd(6); k >= 0; k--) query += pieces[rnd(pieces.length)];
      const path = `${paths[rnd(paths.length)]}?${query}`.replace(/#.*/, '');
      const method = rnd(3) === 0 ? 'POST' : 'GET';
      const res = await client.request({ method, path, headers: { 'blade-auth': `bearer ${token}` }, ...(method === 'POST' ? { body: rnd(2) === 0 ? '' : '{"a":1}' } : {}) });
      await res.body.arrayBuffer();
      statuses.add(res.statusCode);
    }
    await client.close();
    assert.ok([...statuses].every((s) => s >= 200 && s < 500), `statuses ${[...statuses].join(',')}`);
    for (const r of f.offered) assert.match(r.key, /^\d{20}$/);
    assert.ok(f.offered.length > 0, 'some were routed at the edge');
    assert.equal((await f.get(`/vms/device/info?deviceId=${DEV_OFFLINE}`, token)).status, 200, 'still serving');
  });
});
