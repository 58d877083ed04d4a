// `GET /metrics` (http/app.ts, docs/metrics.md): documented only. It takes no input; its answer is the
// Prometheus text exposition, not the API envelope, so no response schema (which would serialize JSON).
export const METRICS_SCHEMA: Readonly<Record<string, unknown>> = {
  summary: 'Prometheus scrape of this instance (text exposition format)',
  description: 'Aggregates only: no device, channel or tenant ids as labels. No operator token, like /healthz. See docs/metrics.md.',
  tags: ['instance'],
  security: [],
};
