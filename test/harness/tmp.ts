/** Temporary directories under os.tmpdir(), removed by `remove()` or, at the latest, at process exit. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerDir } from './cleanup.ts';

export interface TmpDir {
  readonly path: string;
  /** Removes the directory now; idempotent. */
  remove(): void;
}

export function tmpDir(prefix = 'vms-test-'): TmpDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  const unregister = registerDir(path);
  let removed = false;
  return {
    path,
    remove() {
      if (removed) return;
      removed = true;
      unregister();
      rmSync(path, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
