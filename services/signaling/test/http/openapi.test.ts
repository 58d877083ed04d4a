// The OpenAPI description (/openapi.json, /docs) covers every route fastify serves, with the envelope
// and the failure codes; requests are validated by the same schemas, and a refusal is the project's
// envelope naming the parameter in the handlers' own words (never fastify's default error shape).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MediaWiring } from '../../src/media/media-wiring.ts';
import { ROUTES } from '../../src/http/route-table.ts';
import { problemOf } from '../../src/http/schemas/patterns.ts';
import { buildFixture, CH, DEV } from './fixture.ts';

const UPSTREAM = '34010000002000000001';

interface Operation {
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: unknown;
  responses: Record<string, { content?: { 'application/json'?: { schema?: { properties?: Record<string, unknown> } } } }>;
}
type Doc = { openapi: string; servers: { url: string }[]; paths: Record<string, Record<string, Operation>> };

// A stand-in media side: only the webhook route's presence matters here.
const media = { receiveHook: async () => ({ status: 200, contentType: 'application/json', body: { code: 0 } }) } as unknown as MediaWiring;

// A stand-in scrape: only the /metrics route's presence matters here.
const metrics = { contentType: 'text/plain; version=0.0.4; charset=utf-8', render: async () => '' };

async function served() {
  const f = await buildFixture({ media, metrics });
  const routes: { method: string; url: string; hidden: boolean }[] = [];
  f.app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url, hidden: r.schema?.hide === true });
  });
  await f.app.ready();
  const doc = (await f.app.inject({ url: '/openapi.json' })).json<Doc>();
  return { ...f, routes, doc };
}

const openApiPath = (url: string): string => url.replace(/:([A-Za-z]+)/g, '{$1}');

describe('OpenAPI description of the control API', () => {
  it('documents every route fastify serves (HEAD aside); only the docs themselves and the console files are hidden', async () => {
    const { routes, doc, app } = await served();
    assert.equal(doc.openapi, '3.0.3');
    assert.deepEqual(doc.servers.map((s) => s.url), ['/', '/blade-iot'], 'the monolith prefix is described once, as a server');
    const visible = routes.filter((r) => !r.hidden && r.method !== 'HEAD');
    assert.ok(visible.length >= ROUTES.length + 1, `${visible.length} routes collected`);
    for (const r of visible) assert.ok(doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()] !== undefined, `${r.method} ${r.url} is documented`);
    for (const r of routes.filter((x) => x.hidden)) assert.match(r.url, /^\/(docs|openapi\.json|console)/, `${r.url} hidden`);
    for (const spec of ROUTES) assert.ok(visible.some((r) => r.method === spec.method && r.url === spec.path), `${spec.id} served`);
    assert.ok(doc.paths['/vms/webhook/{hook}']?.post !== undefined);
    assert.ok(doc.paths['/metrics']?.get !== undefined, 'the Prometheus scrape is documented');
    assert.ok(doc.paths['/readyz']?.get !== undefined && doc.paths['/vms/routing/rules/{ruleId}']?.put !== undefined);
    await app.close();
  });

  it('describes parameters, the envelope and the failure answers of every control route', async () => {
    const { doc, app } = await served();
    for (const spec of ROUTES) {
      const op = doc.paths[openApiPath(spec.path)]?.[spec.method.toLowerCase()];
      assert.ok(op !== undefined, spec.id);
      const ok = op.responses['200']?.content?.['application/json']?.schema?.properties ?? {};
      assert.deepEqual(Object.keys(ok).sort(), ['code', 'data', 'msg', 'success'], `${spec.id}: envelope`);
      assert.ok(['400', '401', '403', '404', '500', '503'].every((s) => op.responses[s] !== undefined), `${spec.id}: failure answers`);
      const codeText = JSON.stringify(ok['code']);
      for (const code of [4601, 4602, 4603, 4604]) assert.match(codeText, new RegExp(String(code)), `${spec.id}: ${code} described`);
      assert.match(JSON.stringify(op.responses['403']), /4605/, `${spec.id}: forged forward (4605) described`);
      if (spec.routedBy !== null) {
        const key = { channel: 'channelId', session: 'sessionId', device: 'deviceId', sn: 'sn' }[spec.routedBy];
        assert.ok(op.parameters?.some((p) => p.name === key && p.in === 'query' && p.required === true), `${spec.id}: ${key} required`);
      }
    }
    assert.ok(doc.paths['/vms/platforms']?.post?.requestBody !== undefined);
    await app.close();
  });

  it('refuses a 19-digit channelId by schema, before owner routing and the handler, with the envelope', async () => {
    let routed = 0;
    const { app, auth, calls } = await buildFixture({
      ownerRouting: async () => {
        routed++;
        return 'local';
      },
    });
    const res = await app.inject({ method: 'POST', url: `/vms/ptz/control?channelId=${CH.slice(1)}&command=left`, headers: await auth() });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { code: 400, success: false, msg: 'bad parameter channelId: must be a 20-digit code', data: null });
    assert.deepEqual([routed, calls.length], [0, 0], 'neither routed nor run');
    const prefixed = await app.inject({ method: 'POST', url: `/blade-iot/vms/ptz/control?channelId=${CH.slice(1)}&command=left`, headers: await auth() });
    assert.deepEqual(prefixed.json(), res.json(), 'the monolith path is validated the same');
    const good = await app.inject({ method: 'POST', url: `/vms/ptz/control?channelId=${CH}&command=LEFT&speed=%2010`, headers: await auth() });
    assert.deepEqual([good.json().code, routed, calls.at(-1)?.args.slice(1)], [200, 1, ['left', 10]], 'what the readers accept still passes');
    await app.close();
  });

  it('names the parameter in the handlers’ words: required, enumerations, integers, sessions, bodies', async () => {
    const { app, auth } = await buildFixture();
    const headers = await auth();
    const msg = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown): Promise<[number, string]> => {
      const res = await app.inject({ method, url, headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
      const body = res.json<{ code: number; success: boolean; msg: string; data: null }>();
      assert.deepEqual([body.success, body.data], [false, null]);
      return [body.code, body.msg];
    };
    assert.deepEqual(await msg('POST', `/vms/ptz/control?channelId=${CH}`), [400, 'bad parameter command: is required']);
    assert.deepEqual(await msg('POST', `/vms/ptz/control?channelId=${CH}&command=jump`), [
      400,
      'bad parameter command: must be one of left, right, up, down, upleft, upright, downleft, downright, zoomin, zoomout, stop',
    ]);
    assert.deepEqual(await msg('POST', `/vms/ptz/control?channelId=${CH}&command=left&speed=fast`), [400, 'bad parameter speed: must be an integer']);
    assert.deepEqual(await msg('POST', `/vms/ptz/control?channelId=${CH}&command=left&speed=300`), [400, 'bad parameter speed: must be an integer 0-255'], 'range: the reader');
    assert.deepEqual(await msg('POST', '/vms/play/stop?sessionId=a%2Fb'), [400, 'bad parameter sessionId: must be a session id from a start call']);
    assert.deepEqual(await msg('GET', `/vms/devices/${DEV}x`), [400, 'bad parameter deviceId: must be a 20-digit code']);
    assert.deepEqual(await msg('POST', '/vms/record/query?channelId=' + CH + '&startTime=yesterday&endTime=now'), [400, 'bad parameter startTime: must be ISO-8601 or yyyy-MM-dd HH:mm:ss']);
    assert.deepEqual(await msg('GET', '/vms/devices?online=maybe'), [400, 'bad parameter online: must be one of true, false, 1, 0']);
    assert.deepEqual(await msg('GET', '/vms/devices?tenantId=a%20b'), [400, 'bad parameter tenantId: must be 1-12 characters of A-Z a-z 0-9 _ -']);
    assert.deepEqual(await msg('GET', `/vms/platforms?tenantId=${'t'.repeat(13)}`), [400, 'bad parameter tenantId: must be 1-12 characters of A-Z a-z 0-9 _ -']);
    assert.deepEqual(await msg('PUT', `/vms/platforms/${UPSTREAM.slice(1)}`, {}), [400, 'bad parameter serverId: must be a 20-digit code']);
    assert.deepEqual(await msg('POST', '/vms/platforms', { host: '10.1.2.3' }), [400, 'bad parameter serverId: is required']);
    assert.deepEqual(await msg('PUT', '/vms/routing/rules/0', { group: 'g' }), [400, 'bad parameter ruleId: must be a positive integer']);
    assert.deepEqual(await msg('GET', '/vms/routing/versions?limit=many'), [400, 'bad parameter limit: must be an integer']);
    assert.deepEqual(await msg('GET', '/vms/routing/decide'), [400, 'bad parameter group: is required']);
    assert.deepEqual(await msg('PUT', '/vms/routing/sets/s1', ['not', 'an', 'object']), [400, 'bad parameter body: must be a JSON object']);
    // platform body fields are left to validateUpstreamPlatform, which names every bad one at once
    // (test/cascade/platforms-api.test.ts): here, without a platform store, the handler answers 4608
    assert.deepEqual(await msg('PUT', `/vms/platforms/${UPSTREAM}`, { port: 'abc', host: 'a b' }), [4608, 'live device control is not available on this instance (upstream platform administration)']);
    await app.close();
  });

  it('the refusal words match the readers’ for every pattern in use', () => {
    assert.equal(problemOf('^\\s*\\d{20}\\s*$'), 'must be a 20-digit code');
    assert.equal(problemOf('^\\s*(?:|[Uu][Dd][Pp]|[Tt][Cc][Pp]-[Pp][Aa][Ss][Ss][Ii][Vv][Ee])\\s*$'), 'must be one of udp, tcp-passive');
    assert.equal(problemOf('^x$'), null);
  });

  it('serves Swagger UI at /docs from the package (no external assets) and the document without a token', async () => {
    const { app } = await buildFixture();
    const page = await app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    const refs = page.body.match(/(?:src|href)="([^"]*)"/g) ?? [];
    assert.ok(refs.length > 0 && refs.every((r) => /"\.\/static\//.test(r)), refs.join(' '));
    assert.equal((await app.inject({ url: '/docs/static/swagger-ui-bundle.js' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/openapi.json' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/blade-iot/openapi.json' })).statusCode, 200);
    await app.close();
  });
});
