import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigIo } from '../config/load.ts';
import { devSigningKey } from '../config/signing-key.ts';
import { verifyToken } from './jwt.ts';
import { runTokenCommand } from './token-command.ts';

const NOW = Date.UTC(2025, 0, 1);
const KEY = 'token-command-key-0123456789abcdef';
const io = (files: Record<string, string> = {}): ConfigIo => ({
  readFile: (p) => {
    const t = files[p];
    if (t === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
    return t;
  },
  networkInterfaces: () => ({}),
});

describe('npm run token', () => {
  it('prints only a verifiable token on stdout, signed with the configured key', async () => {
    const r = await runTokenCommand(['--tenant', '100001', '--user', '42', '--ttl', '120'], { VMS_AUTH_SIGNING_KEY: KEY }, NOW, io());
    assert.equal(r.exitCode, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    assert.deepEqual(await verifyToken(r.stdout.trim(), KEY, NOW + 119_000), { tenantId: '100001', userId: '42', role: 'tenant' });
    await assert.rejects(verifyToken(r.stdout.trim(), KEY, NOW + 121_000));
  });

  it('reads the key through --config like the service does', async () => {
    const yaml = `vms:\n  auth:\n    signing-key: ${KEY}\n`;
    const r = await runTokenCommand(['--tenant', '000000', '--user', 'admin', '--config', 'c.yml'], {}, NOW, io({ 'c.yml': yaml }));
    assert.equal(r.exitCode, 0);
    assert.deepEqual(await verifyToken(r.stdout.trim(), KEY, NOW), { tenantId: '000000', userId: 'admin', role: 'tenant' });
  });

  it('--operator signs the explicit all-tenant role claim (SPEC SEC-2)', async () => {
    const r = await runTokenCommand(['--tenant', '000000', '--user', 'ops', '--operator'], { VMS_AUTH_SIGNING_KEY: KEY }, NOW, io());
    assert.equal(r.exitCode, 0);
    assert.deepEqual(await verifyToken(r.stdout.trim(), KEY, NOW), { tenantId: '000000', userId: 'ops', role: 'operator' });
    const payload = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    assert.equal(payload['role'], 'operator');
  });

  it('warns on stderr when signing with the development key', async () => {
    const r = await runTokenCommand(['--tenant', '000000', '--user', 'u'], {}, NOW, io());
    assert.equal(r.exitCode, 0);
    assert.match(r.stderr, /WARNING/);
    await verifyToken(r.stdout.trim(), devSigningKey('34020000002000000001'), NOW);
  });

  it('explains bad usage and bad configuration on stderr with exit code 2', async () => {
    for (const argv of [[], ['--tenant', '000000'], ['--user', 'u'], ['--tenant', 'bad tenant!', '--user', 'u'], ['--tenant', 't', '--user', 'has space'], ['--tenant', 't'.repeat(13), '--user', 'u'], ['--tenant', 't', '--user', 'u', '--ttl', '0'], ['--tenant', 't', '--user', 'u', '--bogus']]) {
      const r = await runTokenCommand(argv, {}, NOW, io());
      assert.equal(r.exitCode, 2, argv.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /usage: npm run token/);
    }
    const bad = await runTokenCommand(['--tenant', 't', '--user', 'u'], { VMS_AUTH_SIGNING_KEY: 'short' }, NOW, io());
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /vms\.auth\.signing-key \(VMS_AUTH_SIGNING_KEY\)/);
  });
});
