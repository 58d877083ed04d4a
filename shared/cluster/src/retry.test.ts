import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeRegistryQueryError, NodeRegistryUnavailableError } from './errors.ts';
import { retryTransient } from './retry.ts';

describe('retryTransient (SPEC FAIL-4)', () => {
  it('retries transient errors with exponential back-off, then succeeds', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await retryTransient(
      async () => {
        if (++calls < 3) throw new NodeRegistryUnavailableError('down');
        return 'ok';
      },
      { attempts: 5, baseDelayMs: 100, sleep: async (ms) => void waits.push(ms) },
    );
    assert.equal(result, 'ok');
    assert.deepEqual(waits, [100, 200]);
  });

  it('gives up after the last attempt with the last error', async () => {
    const waits: number[] = [];
    const err = new NodeRegistryUnavailableError('still down');
    await assert.rejects(
      retryTransient(() => Promise.reject(err), { attempts: 4, baseDelayMs: 500, maxDelayMs: 1200, sleep: async (ms) => void waits.push(ms) }),
      (e) => e === err,
    );
    assert.deepEqual(waits, [500, 1000, 1200]);
  });

  it('does not retry non-transient or foreign errors', async () => {
    for (const err of [new NodeRegistryQueryError('no such table'), new TypeError('bug')]) {
      let calls = 0;
      await assert.rejects(
        retryTransient(
          async () => {
            calls++;
            throw err;
          },
          { sleep: async () => undefined },
        ),
      );
      assert.equal(calls, 1);
    }
  });
});
