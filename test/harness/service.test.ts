import assert from 'node:assert/strict';
import { join, dirname } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startService, tmpDir } from './index.ts';

const script = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'http-service.mjs');

describe('startService', () => {
  it('waits for the ready line and /healthz, stops with SIGTERM', async () => {
    const svc = await startService({
      args: [script],
      env: async () => ({ PORT: String(await freePort()), READY_DELAY_MS: '100' }),
      readyLine: /listening on \d+/,
      healthUrl: (env) => `http://127.0.0.1:${env.PORT}/healthz`,
      name: 'stand-in',
    });
    try {
      const res = await fetch(`http://127.0.0.1:${svc.env.PORT}/healthz`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok');
    } finally {
      const exit = await svc.stop();
      assert.equal(exit.code, 0);
      assert.match(svc.output(), /got SIGTERM/);
    }
  });

  it('starts again with a fresh env when the first attempt exits early', async () => {
    const dir = tmpDir();
    let calls = 0;
    const svc = await startService({
      args: [script],
      env: async () => {
        calls++;
        return { PORT: String(await freePort()), FAIL_FIRST_IF_FILE_ABSENT: join(dir.path, 'marker') };
      },
      healthUrl: (env) => `http://127.0.0.1:${env.PORT}/healthz`,
    });
    try {
      assert.equal(calls, 2);
    } finally {
      await svc.kill();
      dir.remove();
    }
  });

  it('gives up with the output in the error', async () => {
    await assert.rejects(
      startService({ args: ['-e', 'console.error("boom"); process.exit(2)'], readyLine: 'never', attempts: 2 }),
      (err: Error) => /not ready after 2 attempt/.test(err.message) && /boom/.test(String((err.cause as Error).message)),
    );
  });
});
