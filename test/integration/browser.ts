// A real browser for the console tests: Debian's chromium (apt package `chromium`, installed by
// `npm run setup`) driven by playwright-core over CDP. The machine's network is closed, so every
// background fetch of the browser is turned off; each run gets a fresh profile directory, removed on
// close. A missing binary fails the test naming `npm run setup` (tests never skip).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { REPO_ROOT } from './signaling-fixture.ts';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox', // root in CI containers: the sandbox needs user namespaces
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Screenshots of the console tests (gitignored: test/artifacts/). */
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test', 'artifacts', 'console');

export function chromiumPath(): string {
  const found = [process.env['VMS_CHROMIUM'], ...CANDIDATES].find((p) => p !== undefined && p !== '' && existsSync(p));
  if (found === undefined) throw new Error('chromium not found (/usr/bin/chromium): run `npm run setup` (installs the Debian package chromium)');
  return found;
}

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'vms-chromium-'));
  // launchPersistentContext passes --user-data-dir itself: the fresh profile above
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    timeout: 60_000,
  });
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
