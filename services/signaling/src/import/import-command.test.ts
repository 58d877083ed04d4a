// The import's own logic with the HTTP client as a port (the end-to-end run against a real instance is
// test/integration/import-cli.test.ts): bounded concurrency, retries of 503, stop on a refused token.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runImport, type ImportIo } from './import-command.ts';

const id = (n: number): string => `3402000000132${String(n).padStart(7, '0')}`;

function io(csv: string, answer: (body: { deviceId: string }, attempt: number) => { status: number; env: unknown }) {
  let inFlight = 0;
  let maxInFlight = 0;
  const attempts = new Map<string, number>();
  const err: string[] = [];
  const fake: ImportIo = {
    readFile: async () => csv,
    fetch: (async (_url: string, init: { body: string }) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setImmediate(r));
      const body = JSON.parse(init.body) as { deviceId: string };
      const n = (attempts.get(body.deviceId) ?? 0) + 1;
      attempts.set(body.deviceId, n);
      const { status, env } = answer(body, n);
      inFlight--;
      return new Response(JSON.stringify(env), { status });
    }) as unknown as typeof fetch,
    err: (t) => err.push(t),
    tty: false,
    now: () => 0,
    sleep: async () => undefined,
  };
  return { fake, err, attempts, maxInFlight: () => maxInFlight };
}

const ok = { status: 200, env: { code: 200, success: true, msg: 'ok', data: { created: true } } };
const ARGS = ['devices.csv', '--url', 'http://127.0.0.1:1', '--token', 't'];

describe('bulk import', () => {
  it('keeps at most --concurrency requests in flight and provisions every row', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => id(i)).join('\n');
    const t = io(rows, () => ok);
    const r = await runImport([...ARGS, '--concurrency', '4'], {}, t.fake);
    assert.equal(r.exitCode, 0);
    assert.equal(t.maxInFlight(), 4);
    assert.equal(t.attempts.size, 50);
    assert.match(r.stdout, /^50 of 50 devices provisioned \(50 new\)/);
    assert.match(t.err.at(-1) ?? '', /^importing devices 50\/50 \(100%\)/);
  });

  it('retries a 503 twice, reports a refused row with its line and the API message, and exits 1', async () => {
    const t = io(`${id(1)}\n${id(2)}\n${id(3)}\nbad\n`, (b, attempt) => {
      if (b.deviceId === id(1) && attempt < 3) return { status: 503, env: { code: 503, success: false, msg: 'database unavailable' } };
      if (b.deviceId === id(2)) return { status: 400, env: { code: 400, success: false, msg: 'bad parameter name: too long' } };
      if (b.deviceId === id(3)) return { status: 503, env: { code: 503, success: false, msg: 'database unavailable' } };
      return ok;
    });
    const r = await runImport(ARGS, {}, t.fake);
    assert.equal(r.exitCode, 1);
    assert.equal(t.attempts.get(id(1)), 3);
    assert.equal(t.attempts.get(id(3)), 3);
    const text = t.err.join('');
    assert.match(text, /line 4: deviceId must be a 20-digit code/);
    assert.match(text, /line 2: bad parameter name: too long \(code 400\)/);
    assert.match(text, /line 3: database unavailable \(503\)/);
    assert.match(r.stdout, /^1 of 4 devices provisioned .*, 3 failed/);
  });

  it('stops at the first refused token instead of trying every row', async () => {
    const rows = Array.from({ length: 100 }, (_, i) => id(i)).join('\n');
    const t = io(rows, () => ({ status: 403, env: { code: 403, success: false, msg: 'device provisioning requires the operator role' } }));
    const r = await runImport([...ARGS, '--concurrency', '2'], {}, t.fake);
    assert.equal(r.exitCode, 1);
    assert.ok(t.attempts.size <= 2, `${t.attempts.size} tried`);
    assert.match(r.stdout, /not tried \(the token was refused\)/);
  });

  it('refuses bad usage with exit 2', async () => {
    const t = io('', () => ok);
    assert.equal((await runImport([], {}, t.fake)).exitCode, 2);
    assert.equal((await runImport([...ARGS, '--concurrency', '0'], {}, t.fake)).exitCode, 2);
    assert.equal((await runImport([...ARGS, '--concurrency', '65'], {}, t.fake)).exitCode, 2);
    assert.match(t.err.join(''), /--concurrency must be 1-64/);
  });
});
