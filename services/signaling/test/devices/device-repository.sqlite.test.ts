import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteDeviceRepository } from '../../src/devices/device-repository.sqlite.ts';
import { openEmbeddedStore } from '../../src/storage/embedded-store.sqlite.ts';
import { deviceRepositoryContract } from './device-repository.contract.ts';

deviceRepositoryContract('sqlite', async (limits) => {
  const dir = mkdtempSync(join(tmpdir(), 'vms-devices-'));
  const store = openEmbeddedStore(dir);
  const repo = createSqliteDeviceRepository({ db: store.db, ...limits });
  return {
    repo,
    async dispose() {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
