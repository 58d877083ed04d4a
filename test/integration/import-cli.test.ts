// `npm run import -- devices.csv` end to end: the CLI as a child process against a running instance
// (embedded store). Every device of the file is provisioned through POST /vms/devices with its tenant,
// name and password, bad lines are named, progress goes to stderr and the summary to stdout; a tenant
// token is refused at the first row.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tsxArgs } from '@vms/harness';
import { signToken } from '@vms/signaling';
import { REPO_ROOT, SIGNING_KEY, startInstance, type Instance } from './signaling-fixture.ts';

const CLI = join(REPO_ROOT, 'services', 'signaling', 'src', 'import-cli.ts');
const COUNT = 300;
const id = (n: number): string => `3402000000132${String(700_000 + n).padStart(7, '0')}`;
let instance: Instance;
let dir: string;

before(async () => {
  instance = await startInstance();
  dir = mkdtempSync(join(tmpdir(), 'vms-import-'));
});

after(async () => {
  await instance?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, tsxArgs(CLI, ...args), { cwd: REPO_ROOT, timeout: 120_000, env: { ...process.env, VMS_TOKEN: '' } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('bulk device import CLI', () => {
  it('provisions every device of the file with bounded concurrency, progress on stderr, bad lines named', async () => {
    const lines = ['deviceId,name,password,tenantId', ...Array.from({ length: COUNT }, (_, i) => `${id(i)},"cam ${i}, hall",pw-${i},t${i % 3}`), '3402,short,,'];
    const file = join(dir, 'devices.csv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const operator = await signToken({ tenantId: '000000', userId: 'it', ttlSec: 600, role: 'operator' }, SIGNING_KEY, Date.now());
    const r = await run([file, '--url', instance.httpUrl, '--token', operator, '--concurrency', '4']);
    assert.equal(r.code, 1, `one bad line: exit 1\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^${COUNT} of ${COUNT + 1} devices provisioned \\(${COUNT} new\\) in [\\d.]+ s, 1 failed\\n$`));
    assert.match(r.stderr, new RegExp(`line ${COUNT + 2}: deviceId must be a 20-digit code`));
    assert.match(r.stderr, new RegExp(`importing devices ${COUNT}/${COUNT} \\(100%\\) · 1 failed · [\\d.]+/s\\n$`), 'final progress line');

    const got = await fetch(`${instance.httpUrl}/vms/devices/${id(4)}`, { headers: { 'Blade-Auth': `bearer ${operator}` } });
    const device = (await got.json()) as { data: { tenantId: string; name: string; hasPassword: boolean; online: boolean } };
    assert.deepEqual([device.data.tenantId, device.data.name, device.data.hasPassword, device.data.online], ['t1', 'cam 4, hall', true, false]);
    const listed = await fetch(`${instance.httpUrl}/vms/devices?idPrefix=${id(0).slice(0, 15)}&tenantId=t0&size=1`, { headers: { 'Blade-Auth': `bearer ${operator}` } });
    assert.equal(((await listed.json()) as { data: { total: number } }).data.total, COUNT / 3);

    // again: nothing new, every device updated
    const again = await run([file, '--url', instance.httpUrl, '--token', operator]);
    assert.match(again.stdout, new RegExp(`^${COUNT} of ${COUNT + 1} devices provisioned \\(0 new\\)`));
  });

  it('a tenant token is refused at the first rows, the rest not tried', async () => {
    const file = join(dir, 'few.csv');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => id(1000 + i)).join('\n'));
    const tenant = await signToken({ tenantId: '000000', userId: 'it', ttlSec: 600 }, SIGNING_KEY, Date.now());
    const r = await run([file, '--url', instance.httpUrl, '--token', tenant, '--concurrency', '2']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /device provisioning requires the operator role \(code 403\)/);
    assert.match(r.stdout, /not tried \(the token was refused\)/);
    const probe = await instance.api('GET', `/vms/devices/${id(1049)}`);
    assert.equal(probe.code, 403, 'the last device was never created');
  });
});
