// The PlatformRepository and MediaNodeRegistry contracts against the embedded store of a single
// instance (SQLite in a data directory, services/signaling src/storage/embedded-store.sqlite.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteMediaNodeRegistry, createSqlitePlatformRepository, openEmbeddedStore, type EmbeddedStore } from '@vms/signaling';
import { platformRepositoryContract } from './cascade-platform-repository.contract.ts';
import { mediaNodeRegistryContract } from './media-node-registry.contract.ts';

function freshStore(): { store: EmbeddedStore; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'vms-store-'));
  const store = openEmbeddedStore(dir);
  return {
    store,
    dispose() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

platformRepositoryContract('sqlite', async () => {
  const { store, dispose } = freshStore();
  const repo = createSqlitePlatformRepository(store.db);
  return {
    repo,
    async close() {
      await repo.close();
      dispose();
    },
  };
});

mediaNodeRegistryContract('sqlite', async () => {
  const { store, dispose } = freshStore();
  const registry = createSqliteMediaNodeRegistry(store.db);
  return {
    registry,
    async close() {
      await registry.close();
      dispose();
    },
  };
});
