// The one table from error codes to the API envelope code and HTTP status (pinned by errors.test.ts).
// Routing failures are business failures: HTTP 200 with success=false (SPEC §12), except a forged
// forward (403). Device-side failures follow the same rule with codes 4606-4608.
import { BadParameterError, BodyTooLargeError, ErrorCodes, InternalError, isVmsError, type ErrorCode, type VmsError } from '../errors/catalog.ts';
import { failure, type Envelope } from './envelope.ts';
import { problemOf } from './schemas/patterns.ts';

export interface EnvelopeMapping {
  readonly httpStatus: number;
  readonly code: number;
}

export const ENVELOPE_BY_ERROR: { readonly [C in ErrorCode]: EnvelopeMapping } = {
  [ErrorCodes.BAD_PARAMETER]: { httpStatus: 400, code: 400 },
  [ErrorCodes.UNAUTHORIZED]: { httpStatus: 401, code: 401 },
  [ErrorCodes.TENANT_FORBIDDEN]: { httpStatus: 403, code: 403 },
  [ErrorCodes.ROLE_FORBIDDEN]: { httpStatus: 403, code: 403 },
  [ErrorCodes.ROUTE_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.DEVICE_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.CHANNEL_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.RECORD_QUERY_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.PLATFORM_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.DEVICE_OFFLINE]: { httpStatus: 200, code: 4601 },
  [ErrorCodes.FORWARDING_DISABLED]: { httpStatus: 200, code: 4602 },
  [ErrorCodes.OWNER_NODE_OFFLINE]: { httpStatus: 200, code: 4603 },
  [ErrorCodes.OWNER_UNREACHABLE]: { httpStatus: 200, code: 4604 },
  [ErrorCodes.FORGED_FORWARD]: { httpStatus: 403, code: 4605 },
  [ErrorCodes.DEVICE_TIMEOUT]: { httpStatus: 200, code: 4606 },
  [ErrorCodes.DEVICE_REJECTED]: { httpStatus: 200, code: 4607 },
  [ErrorCodes.CONTROL_UNAVAILABLE]: { httpStatus: 200, code: 4608 },
  [ErrorCodes.MEDIA_SESSION_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.MEDIA_FAILED]: { httpStatus: 200, code: 4609 },
  [ErrorCodes.GB_VERSION_UNSUPPORTED]: { httpStatus: 200, code: 4610 },
  [ErrorCodes.UPLOAD_NOT_FOUND]: { httpStatus: 404, code: 404 },
  [ErrorCodes.STORAGE_FAILED]: { httpStatus: 503, code: 503 },
  [ErrorCodes.BODY_TOO_LARGE]: { httpStatus: 413, code: 413 },
  [ErrorCodes.RATE_LIMITED]: { httpStatus: 429, code: 429 },
  [ErrorCodes.CHANNEL_LIMIT]: { httpStatus: 409, code: 409 },
  [ErrorCodes.SHUTTING_DOWN]: { httpStatus: 503, code: 503 },
  [ErrorCodes.NOT_READY]: { httpStatus: 503, code: 503 },
  [ErrorCodes.CONFIG_INVALID]: { httpStatus: 500, code: 500 },
  [ErrorCodes.INTERNAL]: { httpStatus: 500, code: 500 },
};

/** Fastify's own client errors (bad JSON, wrong content type, body too large) carry a 4xx statusCode. */
function isClientError(err: unknown): err is Error & { statusCode: number } {
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return err instanceof Error && typeof status === 'number' && status >= 400 && status < 500;
}

interface SchemaFailure {
  readonly keyword: string;
  readonly instancePath: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly message?: string;
}

/**
 * A request refused by a route's schema (schemas/*.ts) as the handlers' readers would refuse it: the
 * parameter's name and the same problem words (params.ts), e.g. `channelId must be a 20-digit code`.
 */
function schemaRefusal(err: unknown): BadParameterError | null {
  const failures = (err as { validation?: unknown } | null)?.validation;
  if (!Array.isArray(failures) || failures.length === 0) return null;
  const first = failures[0] as SchemaFailure;
  const context = (err as { validationContext?: unknown }).validationContext;
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (first.keyword === 'required') {
    const missing = String(first.params['missingProperty'] ?? '');
    return new BadParameterError(path === '' ? missing : `${path}.${missing}`, 'is required');
  }
  const name = path === '' ? (typeof context === 'string' ? context : 'request') : path;
  const pattern = first.params['pattern'];
  // a body that is not an object: the handlers' objectBody words
  const notObject = first.keyword === 'type' && first.params['type'] === 'object' ? 'must be a JSON object' : null;
  const problem = (typeof pattern === 'string' ? problemOf(pattern) : null) ?? notObject ?? first.message ?? 'is invalid';
  return new BadParameterError(name, problem);
}

/** Anything thrown becomes a catalog error; unknown errors become InternalError (cause kept for the log). */
export function toVmsError(err: unknown): VmsError {
  if (isVmsError(err)) return err;
  const refused = schemaRefusal(err);
  if (refused !== null) return refused;
  if (isClientError(err) && err.statusCode === 413) return new BodyTooLargeError({ cause: err });
  if (isClientError(err)) return new BadParameterError('request', err.message);
  return new InternalError({ cause: err });
}

/** Log fields of a refusal: the node a routing failure concerns goes to the log, never to the answer (SPEC SEC-2). */
export function refusalLogFields(err: VmsError): { code: string; reason: string; ownerNode?: string } {
  const ownerNode = (err as { ownerNode?: unknown }).ownerNode;
  return { code: err.code, reason: err.message, ...(typeof ownerNode === 'string' ? { ownerNode } : {}) };
}

export function errorResponse(err: VmsError): { readonly httpStatus: number; readonly body: Envelope<never> } {
  const m = ENVELOPE_BY_ERROR[err.code];
  return { httpStatus: m.httpStatus, body: failure(m.code, err.message) };
}
