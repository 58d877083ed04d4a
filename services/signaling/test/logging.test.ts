// SPEC SEC-4 on a running instance: secrets never appear in log lines (the media-node secret in hook
// URLs, operator tokens, the forward secret, the signing key), and only a forwarded request whose
// secret verified skips the access log; the marker alone changes nothing.
import { FORWARD_HEADERS } from '@vms/cluster';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp } from '../src/app.ts';
import { signToken } from '../src/auth/jwt.ts';
import { loadConfig } from '../src/config/load.ts';
import { createLogger, redactUrl } from '../src/logging/logger.ts';

const KEY = 'logging-test-signing-key-0123456789';
const FORWARD_SECRET = 'forward-secret-never-logged-42';
const HOOK_SECRET = 'zlm-secret-never-logged-77';
const DEV = '34020000001320000001';

function config() {
  return loadConfig([], {
    SERVER_PORT: '0', SERVER_ADDRESS: '127.0.0.1', VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0',
    VMS_GB28181_SIP_INSTANCE_ID: 'node-log', VMS_AUTH_SIGNING_KEY: KEY, VMS_GB28181_SIP_NODE_FORWARD_SECRET: FORWARD_SECRET,
  });
}

interface Line {
  readonly msg: string;
  readonly req?: { readonly url?: string };
  readonly [k: string]: unknown;
}

async function withApp(work: (base: string, lines: () => Line[], raw: () => string) => Promise<void>): Promise<void> {
  const chunks: string[] = [];
  const logger = createLogger('info', 'node-log', { write: (s: string) => void chunks.push(s) });
  const app = createApp(config(), { logger });
  const running = await app.start();
  try {
    await work(running.httpUrl, () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Line), () => chunks.join(''));
  } finally {
    await app.close();
  }
}

const incoming = (lines: Line[], path: string): Line[] => lines.filter((l) => l.msg === 'incoming request' && (l.req?.url ?? '').startsWith(path));

describe('logs keep secrets out (SPEC SEC-4)', () => {
  it('redactUrl blanks secret-carrying query values only', () => {
    assert.equal(redactUrl('/vms/webhook/on_play?secret=abc&x=1'), '/vms/webhook/on_play?secret=***&x=1');
    assert.equal(redactUrl('/a?x=1&SECRET=abc#f'), '/a?x=1&SECRET=***#f');
    assert.equal(redactUrl('/a?token=t&password=p'), '/a?token=***&password=***');
    assert.equal(redactUrl('/vms/devices?secretive=1'), '/vms/devices?secretive=1');
    assert.equal(redactUrl(42), 42);
  });

  it('never writes the hook secret, the token, the forward secret or the signing key', async () => {
    await withApp(async (base, lines, raw) => {
      const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, Date.now());
      await fetch(`${base}/vms/webhook/on_server_keepalive?secret=${HOOK_SECRET}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mediaServerId: 'zlm-1' }),
      });
      await fetch(`${base}/blade-iot/vms/webhook/on_play?secret=${HOOK_SECRET}&app=rtp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await fetch(`${base}/vms/devices`, { headers: { 'blade-auth': `bearer ${token}`, authorization: `Bearer ${token}` } });
      // a wrong forward secret is logged as a refusal, without the secret presented or configured
      await fetch(`${base}/vms/device/info?deviceId=${DEV}`, {
        headers: { 'blade-auth': `bearer ${token}`, [FORWARD_HEADERS.marker]: 'node-x', [FORWARD_HEADERS.secret]: `${FORWARD_SECRET}-guess` },
      });
      const text = raw();
      for (const secret of [HOOK_SECRET, token, FORWARD_SECRET, KEY]) assert.ok(!text.includes(secret), `${secret.slice(0, 12)}… leaked`);
      const hooks = incoming(lines(), '/vms/webhook/');
      assert.equal(hooks.length, 2, 'hooks are still logged');
      for (const l of hooks) assert.match(l.req?.url ?? '', /\?secret=\*\*\*/);
    });
  });

  it('only a forward with a verified secret skips the access log; the marker alone does not', async () => {
    await withApp(async (base, lines) => {
      const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, Date.now());
      const auth = { 'blade-auth': `bearer ${token}` };
      const get = (path: string, headers: Record<string, string>) => fetch(`${base}${path}`, { headers: { ...auth, ...headers } });

      // marker without a secret on a route the routing hook does not see: logged like any other
      assert.equal((await get('/vms/devices?n=nosecret', { [FORWARD_HEADERS.marker]: 'node-x' })).status, 200);
      // marker with no / a wrong secret on a routed route: refused 4605 and logged
      const noSecret = await get(`/vms/device/info?deviceId=${DEV}&n=nosecret`, { [FORWARD_HEADERS.marker]: 'node-x' });
      assert.equal(noSecret.status, 403);
      assert.equal(((await noSecret.json()) as { code: number }).code, 4605);
      const badSecret = await get(`/vms/device/info?deviceId=${DEV}&n=badsecret`, { [FORWARD_HEADERS.marker]: 'node-x', [FORWARD_HEADERS.secret]: 'wrong' });
      assert.equal(badSecret.status, 403);
      // the right secret: a genuine forward, logged by the instance that forwarded it, not here
      const good = await get(`/vms/device/info?deviceId=${DEV}&n=verified`, { [FORWARD_HEADERS.marker]: 'node-x', [FORWARD_HEADERS.secret]: FORWARD_SECRET });
      assert.notEqual(((await good.json()) as { code: number }).code, 4605);

      const all = lines();
      assert.equal(incoming(all, '/vms/devices?n=nosecret').length, 1);
      assert.equal(incoming(all, '/vms/device/info?deviceId=' + DEV + '&n=nosecret').length, 1);
      assert.equal(incoming(all, '/vms/device/info?deviceId=' + DEV + '&n=badsecret').length, 1);
      assert.equal(incoming(all, '/vms/device/info?deviceId=' + DEV + '&n=verified').length, 0);
      assert.equal(all.filter((l) => l.msg === 'request completed').length, 3, 'completion lines of the three unverified requests only');
    });
  });
});
