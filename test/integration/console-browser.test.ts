// The web console (/console) in a real browser: Debian's chromium driven by playwright-core against a
// running cluster (two signaling processes on real redis-server and MariaDB, the ZLM stand-in as media
// node, a simulated NVR with thousands of channels registered on node-a; the browser talks to node-b, so
// every device request of the page is owner-routed across instances). Operator flow: log in with a token, list and search
// devices, see the node table and the cascade leader, open the device (DeviceInfo/DeviceStatus), sync
// its catalog with the progress bar, press a PTZ button (the device receives the PTZCmd), start live
// view (the device is INVITEd, RTP reaches the media node, the URLs are shown) and stop it (BYE).
// A tenant token of another tenant sees none of it. Screenshots: test/artifacts/console/.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { signToken } from '@vms/signaling';
import type { Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser, type Browser } from './browser.ts';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn } from './media-e2e-fixture.ts';
import { SERVER_ID, SIGNING_KEY, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const NVR = '34020000001180000077';
const CHANNELS = 2000;
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let nvr: SimulatedDevice;
let browser: Browser;

const token = (tenantId: string, operator: boolean): Promise<string> =>
  signToken({ tenantId, userId: 'console-it', ttlSec: 3600, ...(operator ? { role: 'operator' as const } : {}) }, SIGNING_KEY, Date.now());

before(async () => {
  stores = await startStores();
  const aPort = await freePort();
  zlm = await startStandIn(aPort); // its hooks go to node-a, the owner of the NVR's streams
  const env = { VMS_MEDIA_NODES: mediaNodesEnv(zlm), VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1', LOG_LEVEL: 'info' };
  a = await startInstance(stores, 'node-a', { env: { ...env, SERVER_PORT: String(aPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${aPort}` } });
  b = await startInstance(stores, 'node-b', { env });
  // one Catalog MESSAGE per channel: thousands of MESSAGEs, so the sync takes long enough to be watched
  nvr = createSimulatedDevice({ server: { host: '127.0.0.1', port: a.sipPort, id: SERVER_ID }, deviceId: NVR, password: 'unused', channels: CHANNELS, catalogPageSize: 1, fps: 25 });
  await nvr.start();
  await waitFor(() => nvr.registered, { timeoutMs: 10_000, description: 'NVR registered on node-a' });
  await waitForOnline(b, ['node-a', 'node-b']);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await nvr?.close();
  await Promise.all([a, b].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

async function login(page: Page, t: string): Promise<void> {
  await page.goto(`${b.httpUrl}/console`);
  await page.locator('#token-input').fill(t);
  await page.locator('#login').click();
  await page.locator('#nav').waitFor({ state: 'visible' });
}

describe('web console in chromium', () => {
  it('operator: login, devices, nodes, device detail, catalog progress, PTZ, live view start and stop', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // the page must work under its own CSP (no inline script or style): a violation is reported here
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) errors.push(m.text());
    });
    await login(page, await token('000000', true));
    assert.equal(await page.evaluate("sessionStorage.getItem('vms.console.token') !== null"), true, 'token kept in sessionStorage');

    // devices: the NVR online, found by id prefix
    const row = page.locator(`#devices tr[data-key="${NVR}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /online/);
    await page.locator('#device-search').fill(NVR.slice(0, 12));
    await page.locator('form.toolbar button[type=submit]').click();
    await page.waitForFunction("location.hash.includes('idPrefix=340200000011')");
    await row.waitFor();
    await page.locator('#device-search').fill('3403');
    await page.locator('form.toolbar button[type=submit]').click();
    await page.locator('#devices td', { hasText: 'nothing to show' }).waitFor();
    await shot(page, '01-devices-search-empty');

    // nodes: both instances, the owner's online device count, the cascade leader (node-a: smallest code)
    await page.locator('a[data-nav=nodes]').click();
    await page.locator('#cascade-leader').waitFor();
    const leader = await page.locator('#cascade-leader').innerText();
    assert.equal(leader, 'node-a');
    assert.equal(await page.locator('#nodes tbody tr').count(), 2, 'both instances listed');
    const nodeRow = page.locator('#nodes tbody tr', { hasText: leader });
    assert.equal(await nodeRow.locator('.online-count').innerText(), '1');
    assert.match(await nodeRow.innerText(), /cascade leader/);
    await shot(page, '02-nodes');

    // device detail: live DeviceInfo and DeviceStatus through the API
    await page.locator('a[data-nav=devices]').click();
    await page.locator(`#devices tr[data-key="${NVR}"]`).click();
    await page.locator('#device-info dl').waitFor();
    assert.match(await page.locator('#device-info').innerText(), new RegExp(`channels\\s+${CHANNELS}`));
    await page.locator('#device-status dl').waitFor();
    assert.match(await page.locator('#device-status').innerText(), /status\s+OK/);

    // catalog sync with its progress bar: record every label the page shows until done
    // (page scripts as text: this package type-checks without the DOM library)
    await page.evaluate(`(() => {
      const seen = (window.progressSeen = []);
      const label = document.getElementById('catalog-label');
      new MutationObserver(() => seen.push(label.textContent)).observe(label, { childList: true, characterData: true, subtree: true });
    })()`);
    await page.locator('#catalog-sync').click();
    await page.locator('#catalog[data-state=done]').waitFor({ timeout: 120_000 });
    const seen = await page.evaluate<string[]>('window.progressSeen');
    assert.equal(await page.locator('#catalog-label').innerText(), `done: ${CHANNELS} of ${CHANNELS} channels`);
    const bar = page.locator('#catalog-progress');
    assert.deepEqual([await bar.getAttribute('value'), await bar.getAttribute('max')], [String(CHANNELS), String(CHANNELS)], 'the bar full');
    assert.ok(seen.some((s) => s.startsWith('receiving:')), `the running state was shown: ${JSON.stringify(seen)}`);
    const partway = seen.filter((s) => /^receiving: [1-9]\d* of \d+/.test(s));
    // 2000 MESSAGEs take seconds even on an idle machine: the bar is polled every 500 ms meanwhile
    assert.ok(partway.length >= 1, `received-of-announced shown while the answer arrived: ${JSON.stringify(seen)}`);
    process.stdout.write(`# catalog progress labels seen while receiving ${CHANNELS} channels: ${partway.length} (${partway.slice(0, 3).join(' | ')})\n`);
    await page.locator('#channels tbody tr').first().waitFor();
    assert.equal(await page.locator('#channels tbody tr').count(), 50, 'first page of 50');
    assert.equal(await page.locator('#device-channel-count').innerText(), String(CHANNELS), 'the record follows the sync');
    assert.match(await page.locator('#channels .pager').innerText(), new RegExp(`page 1 of 40 · ${CHANNELS} in all`));
    await shot(page, '03-device-catalog');

    // PTZ: press and release "left" on the first channel → PTZCmd left, then stop, at the device
    const channel = nvr.channelIds[0] as string;
    await page.locator(`#channels tr[data-key="${channel}"]`).click();
    await page.locator('#ptz button[data-ptz=left]').click();
    await waitFor(
      () => nvr.controls.some((c) => c.targetId === channel && c.ptz?.command.kind === 'move' && c.ptz.command.direction === 'left'),
      { timeoutMs: 5000, description: 'PTZCmd left at the device' },
    );
    await waitFor(() => nvr.controls.some((c) => c.targetId === channel && c.ptz?.command.kind === 'stop'), { timeoutMs: 5000, description: 'PTZ stop on release' });
    // the stop reached the camera after the move it stops (the console sends one command at a time)
    const ptzKinds = nvr.controls.filter((c) => c.targetId === channel && c.ptz !== undefined).map((c) => c.ptz?.command.kind);
    assert.ok(ptzKinds.lastIndexOf('stop') > ptzKinds.indexOf('move'), `stop after move at the device: ${JSON.stringify(ptzKinds)}`);
    await page.locator('#ptz-status', { hasText: 'sent stop' }).waitFor();

    // live view: play started through the API (INVITE at the device, RTP at the media node), URLs shown
    await page.locator('#live-start').click();
    await page.locator('#live-status', { hasText: 'playing' }).waitFor({ timeout: 15_000 });
    const flv = await page.locator('#live-urls a[data-url=flv]').innerText();
    const streamId = /\/rtp\/([^.]+)\.live\.flv$/.exec(flv)?.[1];
    assert.ok(streamId !== undefined, `an HTTP-FLV URL of the media node: ${flv}`);
    assert.ok(flv.startsWith(`http://127.0.0.1:${zlm.httpPort}/`));
    assert.match(await page.locator('#live-urls a[data-url=hls]').innerText(), new RegExp(streamId));
    const play = nvr.sessions.find((s) => s.kind === 'Play' && s.channelId === channel);
    assert.ok(play !== undefined, 'the device was INVITEd');
    await waitFor(() => (zlm.stats(streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 5000, description: 'RTP at the media node' });
    assert.equal(await page.locator('#live-video').count(), 1);
    await shot(page, '04-live-view');

    await page.locator('#live-stop').click();
    await page.locator('#live-status', { hasText: 'stopped' }).waitFor();
    await waitFor(() => play.state === 'closed', { timeoutMs: 5000, description: 'BYE at the device' });
    await waitFor(() => zlm.stats(streamId) === undefined, { timeoutMs: 5000, description: 'RTP server closed at the media node' });
    await shot(page, '05-live-stopped');
    assert.deepEqual(errors, [], 'no script error and no CSP violation in the page');
    await page.close();
  });

  it('a tenant token of another tenant: no device of ours, the node table refused with an explanation', async () => {
    const page = await browser.context.newPage();
    await login(page, await token('100001', false));
    await page.locator('#devices td', { hasText: 'nothing to show' }).waitFor();
    await page.locator('a[data-nav=nodes]').click();
    await page.locator('#nodes-forbidden').waitFor();
    await page.goto(`${b.httpUrl}/console/#/device/${NVR}`);
    await page.locator('.error', { hasText: 'code 403' }).waitFor();
    await shot(page, '06-other-tenant');
    await page.close();
  });

  it('a refused token returns to the login with a message', async () => {
    const page = await browser.context.newPage();
    await login(page, await signToken({ tenantId: '000000', userId: 'x', ttlSec: 3600 }, 'another-signing-key-0123456789abcdef', Date.now()));
    await page.locator('.notice', { hasText: 'token was refused' }).waitFor();
    assert.equal(await page.evaluate("sessionStorage.getItem('vms.console.token')"), null);
    await page.close();
  });
});
