// Small builders for test tables.
import { compileTable, type Destination, type DestinationSet, type Rule, type RoutingTable, type TableSource } from '../src/index.ts';

export const dest = (id: string, kind: Destination['kind'] = 'media'): Destination => ({ id, kind, address: `http://${id}:80` });

export const set = (id: string, algorithm: DestinationSet['algorithm'], members: [string, number?, number?][]): DestinationSet => ({
  id,
  algorithm,
  members: members.map(([d, weight = 1, priority = 0]) => ({ destinationId: d, weight, priority })),
});

let nextId = 1;
export const rule = (over: Partial<Rule> & { setId: string }): Rule => ({ id: nextId++, group: 'g', field: 'device', prefix: '', priority: 0, ...over });

export function source(over: Partial<TableSource>): TableSource {
  return { version: 1, timeZone: 'Asia/Shanghai', destinations: [], sets: [], rules: [], ...over };
}

export function table(over: Partial<TableSource>): RoutingTable {
  const r = compileTable(source(over));
  if (!r.ok) throw new Error(`table does not compile: ${JSON.stringify(r.issues)}`);
  return r.table;
}
