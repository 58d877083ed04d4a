// Counters and histograms for hot paths (a keepalive, every SIP message): prom-client re-hashes and validates the
// label set on every `inc()` of a labelled child (microseconds per call, measured), so these count in
// plain number cells, made once per label set, and hand their totals to prom-client at scrape time.
import { Counter, type Registry } from 'prom-client';

export interface Cell {
  value: number;
}

export interface HotCounterConfig {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registers: Registry[];
}

/** Returns the cell of a label set (values in `labelNames` order); the same cell every time. */
export function hotCounter(config: HotCounterConfig): (...values: string[]) => Cell {
  const cells = new Map<string, { readonly labels: Record<string, string>; readonly cell: Cell }>();
  new Counter({
    name: config.name,
    help: config.help,
    labelNames: config.labelNames,
    registers: config.registers,
    collect() {
      this.reset();
      for (const { labels, cell } of cells.values()) this.inc(labels, cell.value);
    },
  });
  return (...values) => {
    const key = values.join('\u0000');
    let entry = cells.get(key);
    if (entry === undefined) {
      const labels: Record<string, string> = {};
      config.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      entry = { labels, cell: { value: 0 } };
      cells.set(key, entry);
    }
    return entry.cell;
  };
}

export interface HistogramCell {
  /** Records one observation (seconds): a bucket search and three additions. */
  observe(value: number): void;
}

export interface HotHistogramConfig extends HotCounterConfig {
  /** Upper bounds, ascending; +Inf is added. */
  readonly buckets: readonly number[];
}

/**
 * A histogram with the same cell scheme (prom-client's `observe()` on a labelled child costs ~2 µs,
 * measured). Exposed through the registry's collector interface: an object with `name` and `get()`
 * answering the samples (`_bucket` cumulative with `le`, `_sum`, `_count`) in prom-client's shape.
 */
export function hotHistogram(config: HotHistogramConfig): (...values: string[]) => HistogramCell {
  const bounds = [...config.buckets];
  interface Entry {
    readonly labels: Record<string, string>;
    readonly counts: Float64Array; // per bucket, the last one +Inf; not cumulative
    sum: number;
    count: number;
  }
  const entries = new Map<string, { entry: Entry; cell: HistogramCell }>();
  const collector = {
    name: config.name,
    help: config.help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
      for (const { entry } of entries.values()) {
        let acc = 0;
        bounds.forEach((le, i) => {
          acc += entry.counts[i] ?? 0;
          values.push({ labels: { le, ...entry.labels }, value: acc, metricName: `${config.name}_bucket` });
        });
        values.push({ labels: { le: '+Inf', ...entry.labels }, value: entry.count, metricName: `${config.name}_bucket` });
        values.push({ labels: entry.labels, value: entry.sum, metricName: `${config.name}_sum` });
        values.push({ labels: entry.labels, value: entry.count, metricName: `${config.name}_count` });
      }
      return { name: config.name, help: config.help, type: 'histogram', values, aggregator: 'sum' };
    },
  };
  for (const registry of config.registers) registry.registerMetric(collector as unknown as Parameters<Registry['registerMetric']>[0]);
  return (...values) => {
    const key = values.join('\u0000');
    let made = entries.get(key);
    if (made === undefined) {
      const labels: Record<string, string> = {};
      config.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      const entry: Entry = { labels, counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 };
      const cell: HistogramCell = {
        observe(v) {
          let i = 0;
          while (i < bounds.length && v > (bounds[i] as number)) i++;
          entry.counts[i] = (entry.counts[i] ?? 0) + 1;
          entry.sum += v;
          entry.count++;
        },
      };
      made = { entry, cell };
      entries.set(key, made);
    }
    return made.cell;
  };
}
