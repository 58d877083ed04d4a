// The platform runs its TypeScript through tsx, which transpiles with esbuild's `keepNames`: a closure
// made in a naming position (`const f = () => …`, `{ key: () => … }`) is wrapped in `__name(fn, "key")`,
// an Object.defineProperty on every closure made — ~4k instructions each, six per REGISTER before
// issue 11's fix (src/unnamed.ts). The functions run per request must make none: checked on their text
// as esbuild emits it with keepNames (tsx's transform of these files).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { transformSync } from 'esbuild';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** The file as tsx runs it: esbuild, TypeScript loader, ESM, keepNames. */
function asTsxEmitsIt(file: string): string {
  return transformSync(readFileSync(join(SRC, file), 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', keepNames: true }).code;
}

/** A class member's text in esbuild's output (two-space indented, closed by `  }`). */
function member(code: string, signature: string): string {
  const lines = code.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  ${signature}`));
  assert.ok(start >= 0, `member ${signature} not found`);
  const end = lines.findIndex((l, i) => i > start && l === '  }');
  return lines.slice(start, end + 1).join('\n');
}

/** Functions that run for every request a server receives (or every request a client sends). */
const PER_REQUEST: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['ua/server.ts', ['handleRequest(', '#responseSink(', '#serverUser(', '#runHandler(', '#answerStatelessly(']],
  ['transaction/layer.ts', ['startServer(', 'startClient(', 'matchRequest(', 'receiveRequest(', '#completingEnv(']],
];

describe('per-request closures and tsx keepNames', () => {
  it('the check sees the wrapper where it is made (a closure in an object literal)', () => {
    assert.match(transformSync('export const f = (x: number) => ({ key: () => x });', { loader: 'ts', keepNames: true }).code, /__name\(\(\) => x, "key"\)/);
  });

  for (const [file, members] of PER_REQUEST) {
    for (const signature of members) {
      it(`${file} ${signature}…): no closure named per call`, () => {
        const text = member(asTsxEmitsIt(file), signature);
        assert.equal(text.includes('__name('), false, `${file} ${signature}: a closure in a naming position (wrap it in unnamed()):\n${text}`);
      });
    }
  }
});
