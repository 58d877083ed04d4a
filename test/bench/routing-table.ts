// The routing bench's table (test/bench/routing.ts): regions as in GB/T 28181 codes (province 2, city 4,
// district 6 digits), then 10-digit grass-roots units, then single devices (20 digits), with a few windows
// and gray releases. Also the version source a table build thread opens (`openBenchVersionSource`): it
// makes each page's rule objects when the page is read, as a database driver makes its rows.
import type { Destination, DestinationSet, Rule, VersionSource } from '@vms/routing';

export const BENCH_TABLE_MODULE = import.meta.url;
const PAGE_ROWS = 2000;

export function benchTable(rules: number) {
  const provinces = Array.from({ length: 34 }, (_, i) => String(11 + i));
  const cities = provinces.flatMap((p) => Array.from({ length: 10 }, (_, i) => p + String(i + 1).padStart(2, '0')));
  const districts = cities.flatMap((c) => Array.from({ length: 10 }, (_, i) => c + String(i + 1).padStart(2, '0')));
  const regional = provinces.length + cities.length + districts.length;
  const units = Math.max(1, Math.floor((rules - regional) * 0.1));
  const devices = rules - regional - units;
  const unitPrefix = (i: number): string => districts[i % districts.length]! + String(Math.floor(i / districts.length)).padStart(4, '0');
  const deviceCode = (i: number): string => unitPrefix(i % units) + '132' + String(Math.floor(i / units)).padStart(7, '0');

  const ALGS = ['hash-device', 'swrr', 'least-load', 'round-robin'] as const;
  const destinations: Destination[] = Array.from({ length: 256 }, (_, i) => ({ id: `shard-${i}`, kind: 'shard', address: `sip:10.0.${i >> 8}.${i & 255}:5060` }));
  const sets: DestinationSet[] = Array.from({ length: 64 }, (_, s) => ({
    id: `set-${s}`,
    algorithm: ALGS[s % ALGS.length]!,
    members: Array.from({ length: 8 }, (_, m) => ({ destinationId: `shard-${(s * 4 + m) % 256}`, weight: 1 + (m % 3), priority: 0 })),
  }));

  /** The rules in id order, made one at a time (as a store's driver makes rows). */
  function* ruleRows(): Generator<Rule> {
    let id = 1;
    const rule = (prefix: string, extra: Partial<Rule> = {}): Rule => ({ id, group: 'placement', field: 'device', prefix, priority: 0, setId: `set-${id++ % 64}`, ...extra });
    yield rule('');
    for (const p of [...provinces, ...cities, ...districts]) yield rule(p);
    for (let i = 0; i < units; i++) {
      if (i % 100 === 0) yield rule(unitPrefix(i), { window: { start: '08:00', end: '20:00', days: [1, 2, 3, 4, 5] } });
      else yield rule(unitPrefix(i));
    }
    for (let i = 0; i < devices; i++) {
      if (i % 1000 === 0) yield rule(deviceCode(i), { release: { canarySetId: `set-${(i + 1) % 64}`, key: 'device', steps: [1, 10, 50, 100], step: 1 } });
      else yield rule(deviceCode(i));
    }
  }
  return { provinces, cities, districts, regional, units, devices, unitPrefix, deviceCode, destinations, sets, ruleRows };
}

/**
 * A store reading the bench table the way the MySQL store does (routing-store.mysql.ts readVersion): keyset
 * pages of 2,000 rows, each page's rule objects made when it is read, an I/O turn between pages. Making the
 * rows stands in for the driver's parsing, so its cost is inside the build figure.
 */
export function openBenchVersionSource(options: { rules: number }): VersionSource {
  const t = benchTable(options.rules);
  return {
    async readVersion(version) {
      return {
        version,
        destinations: t.destinations,
        sets: t.sets,
        ruleCount: options.rules,
        async *pages() {
          const rows = t.ruleRows();
          for (;;) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            const page: Rule[] = [];
            for (let r = rows.next(); r.done !== true; r = rows.next()) {
              page.push(r.value);
              if (page.length === PAGE_ROWS) break;
            }
            if (page.length > 0) yield page;
            if (page.length < PAGE_ROWS) return;
          }
        },
      };
    },
  };
}
