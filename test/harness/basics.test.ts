import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freePort, freePorts, parseSippStats, spawnManaged, tmpDir, waitFor, WaitTimeoutError, writeInjectionCsv } from './index.ts';

describe('freePort', () => {
  it('returns a port that can be bound on 127.0.0.1', async () => {
    const port = await freePort({ udp: true });
    assert.ok(port > 0 && port < 65536);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('freePorts returns distinct ports', async () => {
    const ports = await freePorts(5);
    assert.equal(new Set(ports).size, 5);
  });
});

describe('waitFor', () => {
  it('resolves with the first truthy value', async () => {
    let n = 0;
    const v = await waitFor(() => (++n >= 3 ? `n=${n}` : false), { intervalMs: 1 });
    assert.equal(v, 'n=3');
  });

  it('treats throws as not-yet and reports the last one on timeout', async () => {
    await assert.rejects(
      waitFor(
        () => {
          throw new Error('still down');
        },
        { timeoutMs: 50, intervalMs: 5, description: 'service up' },
      ),
      (err: unknown) =>
        err instanceof WaitTimeoutError && err.code === 'HARNESS_ERR_WAIT_TIMEOUT' && err.message.includes('service up') &&
        (err.lastError as Error).message === 'still down',
    );
  });
});

describe('waitFor with a signal', () => {
  it('stops polling at once when aborted, with the abort reason', async () => {
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(new Error('service exited')), 30);
    await assert.rejects(waitFor(() => false, { timeoutMs: 5000, intervalMs: 10, signal: ac.signal }), /service exited/);
    assert.ok(Date.now() - started < 1000);
  });
});

describe('tmpDir', () => {
  it('creates under os.tmpdir() and removes idempotently', () => {
    const dir = tmpDir();
    assert.ok(existsSync(dir.path));
    dir.remove();
    dir.remove();
    assert.ok(!existsSync(dir.path));
  });
});

describe('sipp helpers', () => {
  it('parses the cumulative columns of the last stats row', () => {
    const csv = [
      'StartTime;TotalCallCreated;SuccessfulCall(P);SuccessfulCall(C);FailedCall(P);FailedCall(C)',
      'x;1;0;0;0;0',
      'y;10;2;8;1;2',
      '',
    ].join('\n');
    assert.deepEqual(parseSippStats(csv), { created: 10, successful: 8, failed: 2 });
    assert.equal(parseSippStats(''), null);
    assert.equal(parseSippStats('StartTime;Other\n1;2\n'), null);
  });

  it('writes injection CSVs with the read order first', () => {
    const path = writeInjectionCsv([['a', 'b'], ['c', 'd']], 'RANDOM');
    assert.equal(readFileSync(path, 'utf8'), 'RANDOM\na;b\nc;d\n');
  });
});

describe('spawnManaged output', () => {
  it('keeps the last outputLimit characters of many small chunks, in order', async () => {
    // 400 lines of 10 characters, written one by one: 4,000 characters through a 1,000-character window
    const script = "let i = 0; const t = setInterval(() => { process.stdout.write(String(i).padStart(9, '0') + '\\n'); if (++i === 400) { clearInterval(t); } }, 0);";
    const proc = spawnManaged(process.execPath, ['-e', script], { outputLimit: 1000 });
    await proc.exited;
    const out = proc.output();
    assert.equal(out.length, 1000);
    assert.ok(out.endsWith('000000399\n'), out.slice(-20));
    assert.ok(out.startsWith('000000300\n'), out.slice(0, 20));
    await proc.waitForOutput('000000399');
  });
});
