import type { OwnerDirectory } from './owner-directory.port.ts';

/** Single instance (ROUTE-8): this node owns every device; listings show it for online devices only. */
export function createSelfOwnerDirectory(nodeCode: string): OwnerDirectory {
  return {
    async ownersOf(deviceIds) {
      return new Map(deviceIds.map((id) => [id, nodeCode]));
    },
  } satisfies OwnerDirectory;
}
