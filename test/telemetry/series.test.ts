import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterFamily, HistogramFamily } from '../../src/telemetry/series.js';

/** The cheap series must print exactly what prom-client's own Counter and Histogram print. */
describe('CounterFamily and HistogramFamily', () => {
  const buckets = [0.005, 0.01, 0.1, 1];
  const observations: [string, string, number][] = [
    ['/ruc', 'ok', 0.004],
    ['/ruc', 'ok', 0.01],
    ['/ruc', 'ok', 0.5],
    ['/ruc-sunat', 'error', 3],
    ['/ruc', 'ok', 0.005],
  ];

  async function both() {
    const theirs = new Registry();
    const ours = new Registry();
    const counter = new Counter({ name: 'calls_total', help: 'h', labelNames: ['path', 'outcome'], registers: [theirs] });
    const histogram = new Histogram({ name: 'seconds', help: 'h', labelNames: ['path', 'outcome'], buckets, registers: [theirs] });
    const counters = new CounterFamily('calls_total', 'h', ['path', 'outcome'], ours);
    const histograms = new HistogramFamily('seconds', 'h', ['path', 'outcome'], buckets, ours);
    for (const [path, outcome, value] of observations) {
      counter.inc({ path, outcome });
      histogram.observe({ path, outcome }, value);
      counters.series(path, outcome).value++;
      histograms.observe(histograms.series(path, outcome), value);
    }
    return { theirs, ours };
  }

  it('print the same Prometheus text', async () => {
    const { theirs, ours } = await both();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('aggregate across cluster workers as prom-client does', async () => {
    const { theirs, ours } = await both();
    const json = async (r: Registry) => [await r.getMetricsAsJSON(), await r.getMetricsAsJSON()];
    const aggregated = async (r: Registry) => AggregatorRegistry.aggregate(await json(r)).metrics();
    expect(await aggregated(ours)).toBe(await aggregated(theirs));
  });
});
