// The service's root logger (SPEC SEC-4: secrets never appear in logs). Two mechanisms:
//  - `redact` blanks credential-carrying fields wherever a request's or a forward's headers are logged
//    (the operator token, the forward secret), and any field named like a secret or a signing key;
//  - serializers rewrite every logged URL (fastify's `req.url`, our own `url` / `path` fields) so a
//    query parameter carrying a secret reads `secret=***`: ZLM calls our hooks as
//    `/vms/webhook/on_…?secret=<media-node secret>` (SPEC §9), and fastify logs each request's URL.
import { FORWARD_HEADERS } from '@vms/cluster';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/config.types.ts';

const SECRET_HEADERS = ['blade-auth', 'authorization', FORWARD_HEADERS.secret, 'cookie'];
const SECRET_FIELDS = ['secret', 'password', 'signingKey', 'nodeForwardSecret', 'forwardSecret', 'token'];

/**
 * Paths pino blanks (fast-redact syntax); values become `[Redacted]`. Explicit paths only: a wildcard
 * (`*.secret`) visits every key of every logged object and doubled the cost of a log line.
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`, `request.headers["${h}"]`]),
  ...SECRET_FIELDS.flatMap((f) => [f, `config.${f}`, `node.${f}`]),
];

/** Query parameters whose value never reaches a log line. */
const SECRET_QUERY = /([?&](?:secret|password|token|access_token)=)[^&#\s]*/gi;

/** `url` with the values of secret-carrying query parameters replaced by `***`. */
export function redactUrl(url: unknown): unknown {
  return typeof url === 'string' && url.includes('=') ? url.replace(SECRET_QUERY, '$1***') : url;
}

interface LoggedRequest {
  readonly method?: string;
  readonly url?: string;
  readonly host?: string;
  readonly ip?: string;
  readonly socket?: { readonly remotePort?: number } | null;
}

/** fastify's request serializer (lib/logger-pino.js), with the URL redacted. */
function requestSerializer(req: LoggedRequest): Record<string, unknown> {
  return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
}

export const LOG_SERIALIZERS = { req: requestSerializer, url: redactUrl, path: redactUrl, originalUrl: redactUrl };

/** The service's root logger; everything else logs through `.child({ deviceId, callId, … })`. */
export function createLogger(level: LogLevel, instanceId: string, destination?: DestinationStream): Logger {
  const options = { level, base: { instanceId }, redact: [...REDACT_PATHS], serializers: LOG_SERIALIZERS };
  return destination === undefined ? pino(options) : pino(options, destination);
}
