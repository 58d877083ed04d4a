// `npm run catalog-sync -- DEVICE_ID` end to end: the CLI as a child process against a running instance
// and a simulated NVR answering its catalog one channel per MESSAGE; the CLI follows received / SumNum
// on stderr until the whole catalog is stored, and says so on stdout.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { tsxArgs, waitFor } from '@vms/harness';
import { signToken } from '@vms/signaling';
import { PASSWORD, REPO_ROOT, SERVER_ID, SIGNING_KEY, startInstance, type Instance } from './signaling-fixture.ts';

const CLI = join(REPO_ROOT, 'services', 'signaling', 'src', 'catalog-cli.ts');
const NVR = '34020000001180000088';
const CHANNELS = 600;
let instance: Instance;
let nvr: SimulatedDevice;

before(async () => {
  instance = await startInstance();
  nvr = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId: NVR, password: PASSWORD, channels: CHANNELS, catalogPageSize: 1 });
  await nvr.start();
  await waitFor(() => nvr.registered, { timeoutMs: 10_000, description: 'NVR registered' });
});

after(async () => {
  await nvr?.close();
  await instance?.stop();
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, tsxArgs(CLI, ...args), { cwd: REPO_ROOT, timeout: 120_000, env: { ...process.env, VMS_TOKEN: '' } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('catalog sync CLI', () => {
  it('follows received of SumNum until the catalog is stored', async () => {
    const token = await signToken({ tenantId: '000000', userId: 'it', ttlSec: 600 }, SIGNING_KEY, Date.now());
    const r = await run([NVR, '--url', instance.httpUrl, '--token', token]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^catalog of ${NVR}: ${CHANNELS} of ${CHANNELS} channels stored in [\\d.]+ s\\n$`));
    assert.match(r.stderr, new RegExp(`catalog sync ${CHANNELS}/${CHANNELS} \\(100%\\) · [\\d.]+/s\\n$`), 'final progress line');
    const channels = await instance.api<{ total: number }>('GET', `/vms/channels?deviceId=${NVR}&size=1`);
    assert.equal(channels.data.total, CHANNELS);
  });

  it('names the refusal of an unknown device and exits 1; bad usage exits 2', async () => {
    const token = await signToken({ tenantId: '000000', userId: 'it', ttlSec: 600 }, SIGNING_KEY, Date.now());
    const r = await run(['34020000001189999999', '--url', instance.httpUrl, '--token', token]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /catalog sync of 34020000001189999999 refused: .*\(code 403\)/);
    assert.equal((await run(['123', '--url', instance.httpUrl, '--token', token])).code, 2);
  });
});
