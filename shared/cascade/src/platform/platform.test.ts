import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CascadeError } from '../errors.ts';
import type { UpstreamPlatform } from './platform.ts';
import { createMemoryPlatformRepository } from './platform-repository.memory.ts';
import { upstreamPlatform, validateSharedChannel, validateUpstreamPlatform } from './platform.validate.ts';

const required = { serverId: '34010000002000000001', host: '10.1.2.3', localId: '34020000002000000001' } as const;

describe('upstream platform records', () => {
  it('fills the documented defaults; domain from the server id; frozen', () => {
    const p = upstreamPlatform(required);
    assert.deepEqual(p, {
      ...required,
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
