// Path normalisation, in one place (SPEC ROUTE-7): the monolith form `/blade-iot/vms/...` and the
// microservice form `/vms/...` reach the same routes. Fastify's `rewriteUrl` calls this before routing;
// `request.originalUrl` keeps the path exactly as received (forwarding needs it, ROUTE-3).

export const SERVICE_PREFIX = '/blade-iot';

export function stripServicePrefix(url: string): string {
  if (!url.startsWith(SERVICE_PREFIX)) return url;
  const rest = url.slice(SERVICE_PREFIX.length);
  if (rest === '') return '/';
  if (rest.startsWith('/')) return rest;
  if (rest.startsWith('?')) return `/${rest}`;
  return url; // another first segment, e.g. /blade-iotx
}

/** Media-node hooks: no operator token, no owner routing (ROUTE-7). Matched after normalisation. */
export const WEBHOOK_PREFIX = '/vms/webhook/';

export const isWebhookPath = (normalizedUrl: string): boolean => normalizedUrl.startsWith(WEBHOOK_PREFIX);
