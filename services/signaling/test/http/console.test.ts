// The web console's static files (src/http/console.ts): served from memory under /console and the
// /blade-iot prefix, with a strict content security policy, no token needed for the files, nothing
// outside the shipped folder reachable, and hidden from the API description.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONSOLE_DIR, loadConsoleFiles, MAX_CONSOLE_BYTES } from '../../src/http/console.ts';
import { buildFixture } from './fixture.ts';

describe('web console files', () => {
  it('serves index.html at /console/ (and under /blade-iot), redirecting /console relatively', async () => {
    const f = await buildFixture();
    const page = await f.app.inject({ url: '/console/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<script type="module" src="app.js"><\/script>/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self';/);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    const prefixed = await f.app.inject({ url: '/blade-iot/console/' });
    assert.equal(prefixed.body, page.body);
    const bare = await f.app.inject({ url: '/blade-iot/console' });
    assert.deepEqual([bare.statusCode, bare.headers.location], [302, 'console/'], 'relative: keeps the prefix');
    await f.app.close();
  });

  it('serves the modules and style sheet with their types; anything else is the 404 envelope', async () => {
    const f = await buildFixture();
    const js = await f.app.inject({ url: '/console/app.js' });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.match(String((await f.app.inject({ url: '/console/style.css' })).headers['content-type']), /^text\/css/);
    for (const url of ['/console/nope.js', '/console/..%2Fpackage.json', '/console/%2e%2e%2fsrc%2fmain.ts', '/console/app.js.map', '/console/README.md']) {
      const r = await f.app.inject({ url });
      assert.equal(r.statusCode, 404, url);
      assert.equal(r.json().code, 404, url);
    }
    await f.app.close();
  });

  it('every module the page imports is served (no dangling import, no external URL)', async () => {
    const f = await buildFixture();
    const files = loadConsoleFiles();
    for (const [name, file] of files) {
      const text = file.body.toString('utf8');
      assert.doesNotMatch(text, /(src|href)="https?:|from 'https?:|import\('https?:/, `${name} loads nothing from outside`);
      for (const m of text.matchAll(/from '\.\/([^']+)'/g)) assert.ok(files.has(m[1] ?? ''), `${name} imports ${m[1]}`);
      assert.equal((await f.app.inject({ url: `/console/${name}` })).statusCode, 200, name);
    }
    await f.app.close();
  });

  it('loads only flat .html/.js/.css names, bounded in size, and requires index.html', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vms-console-'));
    try {
      assert.throws(() => loadConsoleFiles(dir), /no index.html/);
      writeFileSync(join(dir, 'index.html'), '<!doctype html>');
      writeFileSync(join(dir, 'secret.env'), 'X=1');
      writeFileSync(join(dir, '.hidden.js'), '');
      mkdirSync(join(dir, 'sub.js'));
      assert.deepEqual([...loadConsoleFiles(dir).keys()], ['index.html']);
      writeFileSync(join(dir, 'big.js'), Buffer.alloc(MAX_CONSOLE_BYTES));
      assert.throws(() => loadConsoleFiles(dir), /exceed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.ok(loadConsoleFiles(CONSOLE_DIR).has('app.js'));
  });
});
