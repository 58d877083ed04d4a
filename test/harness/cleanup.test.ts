// A crashed or killed test process must not leave servers or temp dirs behind (harness cleanup.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitFor } from './index.ts';

const here = dirname(fileURLToPath(import.meta.url));
const maker = join(here, 'fixtures', 'orphan-maker.ts');

async function runMaker(mode: string): Promise<{ pid: number; dir: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', maker, mode], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = out.split('\n').find((l) => l.startsWith('{'));
  assert.ok(line !== undefined, `orphan-maker printed nothing for ${mode}`);
  return JSON.parse(line) as { pid: number; dir: string };
}

/** A killed orphan is re-parented to pid 1, which may reap it late: a zombie counts as dead. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('cleanup at process end', { concurrency: true }, () => {
  for (const mode of ['exit', 'throw', 'sigterm', 'sigkill']) {
    it(`kills children and removes temp dirs on ${mode}`, async () => {
      const { pid, dir } = await runMaker(mode);
      // exit/throw/sigterm clean up synchronously; sigkill relies on the reaper's 1 s poll
      await waitFor(() => !alive(pid) && !existsSync(dir), { timeoutMs: 4000, description: `cleanup after ${mode}` });
      assert.ok(!existsSync(join(dir, '..', `vms-harness-${pid}.manifest`)));
    });
  }
});
