// The hot cells must expose exactly what prom-client's own metrics would for the same observations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { hotCounter, hotHistogram } from './hot-metrics.ts';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [string, number][] = [['ok', 0.0004], ['ok', 0.001], ['ok', 0.05], ['ok', 7], ['4604', 0.2], ['ok', 0.0101]];

describe('hot metrics', () => {
  it('a hot histogram renders as prom-client Histogram does', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const cell = hotHistogram({ name: 'h_seconds', help: 'h', labelNames: ['outcome'], buckets: BUCKETS, registers: [ours] });
    const ref = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['outcome'], buckets: BUCKETS, registers: [theirs] });
    for (const [outcome, v] of OBSERVED) {
      cell(outcome).observe(v);
      ref.labels(outcome).observe(v);
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
  });

  it('a hot counter renders as prom-client Counter does, and keeps one cell per label set', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const cells = hotCounter({ name: 'c_total', help: 'c', labelNames: ['direction', 'method'], registers: [ours] });
    const ref = new Counter({ name: 'c_total', help: 'c', labelNames: ['direction', 'method'], registers: [theirs] });
    assert.equal(cells('in', 'MESSAGE'), cells('in', 'MESSAGE'));
    for (const [d, m] of [['in', 'MESSAGE'], ['in', 'MESSAGE'], ['out', 'REGISTER'], ['in', 'MESSAGE']] as const) {
      cells(d, m).value++;
      ref.labels(d, m).inc();
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
    cells('in', 'MESSAGE').value++;
    assert.match(await ours.metrics(), /^c_total\{direction="in",method="MESSAGE"\} 4$/m, 'the total is read at every scrape');
  });
});
