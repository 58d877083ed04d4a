/**
 * A version held in memory, handed to a table build thread in the request itself (structured clone:
 * meant for tables of thousands of rules, such as tests'; the embedded stores read their own file, MySQL
 * its own connection). `{ module: MEMORY_VERSION_SOURCE, export: 'openMemoryVersionSource', options: data }`.
 */
import { tableDataReader } from './compile-stored.ts';
import type { TableData } from './routing-store.port.ts';
import type { VersionSource } from './table-build.worker.ts';
import type { VersionSourceSpec } from './table-build.protocol.ts';

export const MEMORY_VERSION_SOURCE = new URL('./version-source.memory.ts', import.meta.url).href;

export function memoryVersionSource(data: TableData): VersionSourceSpec {
  return { module: MEMORY_VERSION_SOURCE, export: 'openMemoryVersionSource', options: data };
}

export function openMemoryVersionSource(data: TableData): VersionSource {
  return {
    readVersion: async (v) => (v === data.version ? tableDataReader(data) : undefined),
  };
}
