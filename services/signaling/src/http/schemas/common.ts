// JSON schemas shared by the control API's routes (fastify validates requests with them and
// @fastify/swagger publishes them as OpenAPI at /openapi.json). Query values stay strings (fastify
// would coerce typed ones; the handlers' readers in params.ts take text), so formats are patterns.
// Optional parameters also accept the empty string, which the readers treat as absent.
import { ENVELOPE_BY_ERROR } from '../errors.ts';
import { anyCasePattern, GB_ID_PATTERN, INT_PATTERN, OPTIONAL_INT_PATTERN, SERIAL_PATTERN, SESSION_ID_PATTERN, TIME_PATTERN } from './patterns.ts';

export { GB_ID_PATTERN };

export type JsonSchema = Readonly<Record<string, unknown>>;

/** What a route declares to fastify (validation) and @fastify/swagger (the document). */
export interface RouteSchema {
  readonly summary: string;
  readonly tags: readonly string[];
  readonly description?: string;
  readonly querystring?: JsonSchema;
  readonly params?: JsonSchema;
  readonly body?: JsonSchema;
  readonly response: Readonly<Record<string, JsonSchema>>;
  readonly security?: readonly Record<string, readonly string[]>[];
}

export const gbIdParam = (description: string): JsonSchema => ({ type: 'string', pattern: GB_ID_PATTERN, description: `${description} (20-digit GB28181 code)` });

export const sessionIdParam: JsonSchema = { type: 'string', pattern: SESSION_ID_PATTERN, description: 'session id handed out by a start call' };

export const serialParam: JsonSchema = { type: 'string', pattern: SERIAL_PATTERN, description: 'query serial number handed out by POST /vms/record/query' };

export const timeParam = (description: string): JsonSchema => ({
  type: 'string',
  pattern: TIME_PATTERN,
  description: `${description}: ISO-8601 or yyyy-MM-dd HH:mm:ss (platform time zone when no offset is given)`,
});

export function enumParam(values: readonly string[], description: string, optional = false): JsonSchema {
  return { type: 'string', pattern: anyCasePattern(values, optional), description: `${description}: one of ${values.join(', ')} (any case)` };
}

/** An integer in [min, max] written in decimal; '' (absent) too when optional. */
export function intParam(min: number, max: number, description: string, optional = true): JsonSchema {
  return { type: 'string', pattern: optional ? OPTIONAL_INT_PATTERN : INT_PATTERN, description: `${description}: integer ${min}-${max}` };
}

export const booleanParam = (description: string): JsonSchema => ({ type: 'string', pattern: anyCasePattern(['true', 'false', '1', '0'], true), description: `${description}: true or false` });

/** BladeX paging (`current` 1-based, `size` ≤ 1000). */
export const PAGING_PROPERTIES: Readonly<Record<string, JsonSchema>> = {
  current: intParam(1, 1_000_000, 'page number, 1-based (default 1)'),
  size: intParam(1, 1000, 'page size (default 20)'),
};

/** A querystring object: the listed properties, `required` ones must be present; others are ignored. */
export function query(properties: Readonly<Record<string, JsonSchema>>, required: readonly string[] = []): JsonSchema {
  return { type: 'object', properties, ...(required.length === 0 ? {} : { required }) };
}

// ---------------------------------------------------------------------------------------------------
// Answers (SPEC §12): every answer is the envelope {code, success, msg, data}.

const codesWith = (httpStatus: number): number[] =>
  [...new Set(Object.values(ENVELOPE_BY_ERROR).filter((m) => m.httpStatus === httpStatus).map((m) => m.code))].sort((a, b) => a - b);

const FAILURE_CODES_TEXT: Readonly<Record<number, string>> = {
  400: 'a parameter is missing or malformed (msg names it)',
  401: 'no operator token, or an invalid or expired one',
  403: 'the resource belongs to another tenant',
  404: 'no such route, device, channel, platform, session or query',
  4601: 'the device is not registered to any instance (no owner)',
  4602: 'the owner is another instance and forwarding is disabled (no node forward secret)',
  4603: 'the owner instance is not online in the node table',
  4604: 'the owner instance did not answer the forwarded request',
  4605: 'a forwarded request with a forged forward marker',
  4606: 'the device did not answer in time',
  4607: 'the device refused the command',
  4608: 'this instance cannot control devices (no SIP side)',
  4609: 'the media node failed (live view, playback, download, snapshot)',
  4610: 'the device does not speak GB/T 28181-2022 (registered without X-GB-ver 3.0 and not configured as 2022)',
  500: 'internal error',
  503: 'storage unavailable or the instance is shutting down',
};

const describeCodes = (codes: readonly number[]): string => codes.map((c) => `${c}: ${FAILURE_CODES_TEXT[c] ?? 'failure'}`).join('; ');

/** The envelope with `data` as given. `data` stays open (fastify serialises answers with this schema). */
export function envelope(data: JsonSchema, description: string): JsonSchema {
  return {
    description,
    type: 'object',
    required: ['code', 'success', 'msg', 'data'],
    properties: {
      code: { type: 'integer', description: `200 on success; else ${describeCodes(codesWith(200).filter((c) => c !== 200))}` },
      success: { type: 'boolean' },
      msg: { type: 'string', description: "'ok' on success, else what went wrong" },
      data,
    },
  };
}

const failureEnvelope = (status: number): JsonSchema => ({
  description: describeCodes(codesWith(status)),
  type: 'object',
  required: ['code', 'success', 'msg', 'data'],
  properties: {
    code: { type: 'integer', enum: codesWith(status) },
    success: { type: 'boolean', enum: [false] },
    msg: { type: 'string' },
    data: { type: 'null' },
  },
});

/** The answers of a control route: 200 (success or a business failure 4601-4609), and the HTTP failures. */
export function answers(data: JsonSchema, description: string): Readonly<Record<string, JsonSchema>> {
  return {
    200: envelope(data, `${description}. Business failures (4601-4604 owner routing, 4606-4610 device and media) also answer HTTP 200 with success=false and data=null`),
    400: failureEnvelope(400),
    401: failureEnvelope(401),
    403: failureEnvelope(403),
    404: failureEnvelope(404),
    500: failureEnvelope(500),
    503: failureEnvelope(503),
  };
}

/** Any JSON value (documented by its description only). */
export const anyData = (description: string): JsonSchema => ({ description });

/** BladeX page of records. */
export const pageOf = (item: string): JsonSchema => ({
  description: `page of ${item}: {records, total, size, current, pages}`,
  type: 'object',
  properties: { records: { type: 'array', items: {} }, total: { type: 'integer' }, size: { type: 'integer' }, current: { type: 'integer' }, pages: { type: 'integer' } },
});
