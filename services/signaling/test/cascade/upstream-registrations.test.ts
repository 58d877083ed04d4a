// UpstreamRegistrations (src/cascade): the leader registers to every enabled platform at once, stops
// all on losing the role, and follows edits (restart, reconcile). Real @vms/sip stacks on 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryPlatformRepository, upstreamPlatform, type PlatformRepository } from '@vms/cascade';
import { createSnGenerator } from '@vms/gb28181';
import { createSipStack, type SipStack } from '@vms/sip';
import { pino } from 'pino';
import { UpstreamRegistrations } from '../../src/cascade/upstream-registrations.ts';
import { systemClock } from '../../src/core/clock.ts';

const LOCAL_ID = '34020000002000000001';
const UP_A = '34010000002000000001';
const UP_B = '34010000002000000002';
const log = pino({ level: 'silent' });

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('UpstreamRegistrations', () => {
  let upstream: SipStack;
  let local: SipStack;
  const registers: string[] = []; // Request-URI user (the upstream id) of each REGISTER received
  let repo: PlatformRepository;

  before(async () => {
    upstream = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
    upstream.onRequest('REGISTER', (req, ctx) => {
      registers.push(req.uri.user ?? '?');
      ctx.reply(200, { headers: { Expires: req.headers.get('Expires') ?? '3600' } });
    });
    upstream.onRequest('MESSAGE', (_req, ctx) => ctx.reply(200));
    local = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
    repo = createMemoryPlatformRepository();
    const base = { host: '127.0.0.1', port: upstream.port, transport: 'udp' as const, localId: LOCAL_ID };
    await repo.upsert(upstreamPlatform({ ...base, serverId: UP_A }));
    await repo.upsert(upstreamPlatform({ ...base, serverId: UP_B, enabled: false }));
  });
  after(async () => {
    await local.close();
    await upstream.close();
  });

  it('activate registers every enabled platform, deactivate stops all, reconcile follows the store', async () => {
    const regs = new UpstreamRegistrations({ platforms: repo, sip: local, clock: systemClock, sn: createSnGenerator(), log });
    await regs.reconcile(); // not leading: nothing happens
    assert.equal(regs.running.size, 0);

    await regs.activate();
    assert.deepEqual([...regs.running.keys()], [UP_A], 'disabled platforms are not registered');
    await until(() => registers.includes(UP_A), 'REGISTER to A');
    await until(() => regs.running.get(UP_A)?.state.online === true, 'A online');

    // B enabled through another instance: reconcile starts it; A unchanged keeps running
    const runningA = regs.running.get(UP_A);
    const b = await repo.get(UP_B);
    assert.ok(b !== null);
    await repo.upsert({ ...b, enabled: true });
    await regs.reconcile();
    assert.deepEqual([...regs.running.keys()].sort(), [UP_A, UP_B]);
    assert.equal(regs.running.get(UP_A), runningA, 'an unchanged platform is not restarted');
    await until(() => registers.includes(UP_B), 'REGISTER to B');

    // removed here: platformChanged stops it
    await repo.remove(UP_B);
    await regs.platformChanged(UP_B);
    assert.deepEqual([...regs.running.keys()], [UP_A]);

    regs.deactivate();
    assert.equal(regs.running.size, 0);
    assert.equal(runningA?.state.phase, 'stopped');
    await regs.platformChanged(UP_A); // not leading: no restart
    assert.equal(regs.running.size, 0);
  });
});
