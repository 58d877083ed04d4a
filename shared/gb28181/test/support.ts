/** Small assertion helpers shared by the test files. */
import assert from 'node:assert/strict';
import { test as nodeTest, type TestOptions } from 'node:test';
import { isGbError, type GbErrorCode } from '../src/index.ts';
import { loadAllSampleBodies, type SampleBody } from './samples.ts';

type TestBody = () => void | Promise<void>;

/**
 * node:test's `test()` returns a promise the runner already tracks; this wrapper returns void so the
 * repository's no-floating-promises lint rule (STYLE §5) stays strict without `void` on every test.
 */
export function test(name: string, body: TestBody): void;
export function test(name: string, options: TestOptions, body: TestBody): void;
export function test(name: string, a: TestOptions | TestBody, b?: TestBody): void {
  void (typeof a === 'function' ? nodeTest(name, a) : nodeTest(name, a, b));
}

/** Asserts that `fn` throws one of this package's typed errors with `code`. */
export function throwsGb(fn: () => unknown, code: GbErrorCode): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isGbError(err), `expected a GbError, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  });
}

let cache: SampleBody[] | undefined;

export function allSamples(): SampleBody[] {
  cache ??= loadAllSampleBodies();
  return cache;
}

/** The `index`-th body of the sample file whose name starts with `prefix` (e.g. '06'). */
export function sample(prefix: string, index: number): SampleBody {
  const found = allSamples().find((s) => s.file.startsWith(`${prefix}-`) && s.index === index);
  assert.ok(found, `no sample body ${prefix}/${index}`);
  return found;
}
