import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CascadeError } from '../errors.ts';
import type { UpstreamPlatform } from './platform.ts';
import { createMemoryPlatformRepository } from './platform-repository.memory.ts';
import { isPlatformHost, upstreamPlatform, validateSharedChannel, validateUpstreamPlatform } from './platform.validate.ts';

const required = { serverId: '34010000002000000001', host: '10.1.2.3', localId: '34020000002000000001' } as const;

describe('upstream platform records', () => {
  it('fills the documented defaults; domain from the server id; frozen', () => {
    const p = upstreamPlatform(required);
    assert.deepEqual(p, {
      ...required,
      tenantId: '000000',
      name: '',
      domain: '3401000000',
      port: 5060,
      transport: 'udp',
      password: '',
      registerExpiresS: 3600,
      keepaliveIntervalS: 60,
      maxKeepaliveFailures: 3,
      enabled: true,
      charset: 'GB2312',
      catalog: { groupId: null, groupName: null },
    });
    assert.ok(Object.isFrozen(p) && Object.isFrozen(p.catalog));
  });

  it('reports every problem at once', () => {
    const bad = {
      ...upstreamPlatform(required),
      serverId: '3401',
      localId: 'x',
      domain: 'bad domain',
      host: '',
      port: 70_000,
      transport: 'sctp',
      registerExpiresS: 5,
      keepaliveIntervalS: 0,
      maxKeepaliveFailures: 1.5,
      charset: 'BIG5',
      catalog: { groupId: '123', groupName: null },
    } as unknown as UpstreamPlatform;
    assert.throws(
      () => validateUpstreamPlatform(bad),
      (e: CascadeError) => {
        assert.equal(e.code, 'CASCADE_ERR_INVALID_PLATFORM');
        for (const word of ['serverId', 'localId', 'domain', 'host', 'port', 'transport', 'registerExpiresS', 'keepaliveIntervalS', 'maxKeepaliveFailures', 'charset', 'catalog.groupId']) {
          assert.ok(e.message.includes(word), word);
        }
        return true;
      },
    );
    assert.throws(() => upstreamPlatform({ ...required, localId: required.serverId }), /localId must differ/);
  });

  it('host: a literal IP address or a DNS name only; every field type-checked and named (SPEC SEC-2/3)', () => {
    for (const ok of ['10.1.2.3', '::1', '2001:db8::10', 'sip.example.com', 'upper-1.example.', 'localhost', 'a'.repeat(63) + '.cn']) {
      assert.equal(isPlatformHost(ok), true, ok);
    }
    const bad = [
      '', 'http://10.1.2.3', '10.1.2.3:5060', 'sip.example.com:5060', 'a b', ' 10.1.2.3', 'host/path', '[::1]', 'fe80::1%eth0',
      '999.1.2.3', '10.1.2', '-lead.example', 'trail-.example', 'a..b', 'a'.repeat(64) + '.cn', `${'a.'.repeat(127)}cn`, 'user@host', 'h;transport=tcp', 'x\ny',
      42, null,
    ];
    for (const b of bad) assert.equal(isPlatformHost(b), false, JSON.stringify(b));
    const typed = { ...upstreamPlatform(required), host: 1234, port: '5060', name: 'a\u0000b', tenantId: 't'.repeat(13), enabled: 'yes' } as unknown as UpstreamPlatform;
    assert.throws(
      () => validateUpstreamPlatform(typed),
      (e: CascadeError) => {
        assert.deepEqual(e.fields, ['tenantId', 'host', 'port', 'name', 'enabled']);
        assert.match(e.message, /host must be a literal IP address or a DNS name/);
        return true;
      },
    );
    assert.equal(upstreamPlatform({ ...required, tenantId: 'tenant_B-1' }).tenantId, 'tenant_B-1');
  });

  it('shared channels: ids checked, null placement allowed', () => {
    const ok = { deviceId: '34020000001320000001', channelId: '34020000001310000001', catalogGroupId: null, parentId: null };
    assert.equal(validateSharedChannel(ok), ok);
    assert.throws(() => validateSharedChannel({ ...ok, channelId: 'a b', catalogGroupId: '1' }), (e: CascadeError) => e.code === 'CASCADE_ERR_INVALID_CHANNEL' && /channelId.*catalogGroupId/.test(e.message));
  });

  it('memory repository stores frozen copies: a caller mutating its object changes nothing', async () => {
    const repo = createMemoryPlatformRepository();
    const p = { ...upstreamPlatform(required), catalog: { groupId: null, groupName: null as string | null } };
    await repo.upsert(p);
    p.catalog.groupName = 'changed';
    assert.equal((await repo.get(required.serverId))?.catalog.groupName, null);
    await repo.close();
    await assert.rejects(repo.listAll(), (e: CascadeError) => e.code === 'CASCADE_ERR_CLOSED');
  });
});
