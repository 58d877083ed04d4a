// Owner node per device for listings (SPEC §12 "lists with owner node"), from the ownership store.
// FAIL-3: with Redis unreachable a listing still answers, naming this instance for its own devices.
import { isTransientClusterError, type OwnershipStore } from '@vms/cluster';
import type { OwnerDirectory } from '../ownership/owner-directory.port.ts';
import type { OwnershipRecorder } from './ownership-recorder.ts';

export function createClusterOwnerDirectory(store: OwnershipStore, recorder: OwnershipRecorder, selfCode: string): OwnerDirectory {
  return {
    async ownersOf(deviceIds) {
      try {
        return await store.ownersOf(deviceIds);
      } catch (err) {
        if (!isTransientClusterError(err)) throw err;
        return new Map(deviceIds.filter((id) => recorder.isLocallyOwned(id)).map((id) => [id, selfCode]));
      }
    },
  } satisfies OwnerDirectory;
}
