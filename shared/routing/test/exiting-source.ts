// Version sources that end the build thread they run on (`process.exit` on a worker thread ends that thread
// only), for the replacement tests of a kept-warm builder (table-worker.ts). Loaded by the build thread
// from a VersionSourceSpec, never by the test's own thread.
import type { VersionSource } from '../src/index.ts';

export const EXITING_SOURCE = import.meta.url;

/** A source whose read ends the thread: a build through it dies mid-way (exit code 3). */
export function openExitingSource(): VersionSource {
  return {
    readVersion: () => process.exit(3),
  };
}
