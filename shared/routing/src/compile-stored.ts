/**
 * Compiles a stored version without holding its rules as objects: the store hands pages of rules
 * (VersionReader), each is checked and packed into typed columns, and the prefix indexes are built from
 * the columns in time slices. The event loop runs between pages and between slices, so a million rules
 * are built while requests keep being served (SEC-3's 50 ms; figures in docs/routing.md).
 */
import { TableBuilder, type CompileResult } from './compile.ts';
import type { RoutingStore, TableData, VersionReader } from './routing-store.port.ts';

/** Rules per page when a version already in memory is read in pages. */
const MEMORY_PAGE_ROWS = 2000;
/** Rules packed and indexed between two looks at the clock (a step stays well under a slice, cold code too). */
const STEP_RULES = 256;

/** A version held in memory, read in pages like a stored one (memory store, tests). */
export function tableDataReader(data: TableData): VersionReader {
  return {
    version: data.version,
    destinations: data.destinations,
    sets: data.sets,
    ruleCount: data.rules.length,
    async *pages() {
      for (let i = 0; i < data.rules.length; i += MEMORY_PAGE_ROWS) {
        if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        yield data.rules.slice(i, i + MEMORY_PAGE_ROWS);
      }
    },
  };
}

/** undefined when the store has no such version. */
export async function compileStoredVersion(
  store: Pick<RoutingStore, 'readVersion'>,
  version: number,
  timeZone: string,
  sliceMs = 8,
): Promise<CompileResult | undefined> {
  const reader = await store.readVersion(version);
  if (reader === undefined) return undefined;
  const builder = new TableBuilder({ version, timeZone, destinations: reader.destinations, sets: reader.sets }, reader.ruleCount);
  // A page is packed and indexed in the turns after it arrived (steps of STEP_RULES, yielding after sliceMs):
  // its rule objects die before the next scavenge, young, instead of being promoted to the old generation
  // that a mark-compact would then walk.
  let sliceStart = performance.now();
  for await (const page of reader.pages()) {
    for (let i = 0; i < page.length; i += STEP_RULES) {
      builder.addRules(page, i, Math.min(page.length, i + STEP_RULES));
      if (performance.now() - sliceStart >= sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
  }
  return builder.finishSliced(sliceMs);
}
