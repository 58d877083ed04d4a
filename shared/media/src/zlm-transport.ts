/**
 * One HTTP connection pool per media node and ZLM's call convention: `GET /index/api/<name>?secret=…`
 * (ZLM accepts GET and POST for every API), HTTP 200 with a JSON body `{code, msg?, ...}` where
 * `code != 0` is a failure (ApiErr: -1 failed, -100 auth, -300 invalid args, -400 exception).
 *
 * Every failure becomes a ZlmCallError (STYLE §2); nothing else escapes. Timeouts: a short connect
 * timeout so a dead node fails fast and the caller can try another one, and one overall deadline per
 * call covering headers and body.
 */
import { channel } from 'node:diagnostics_channel';
import { Pool } from 'undici';
import type { MediaErrorCode } from './errors.ts';
import { ZlmCallError } from './errors.ts';

export interface ZlmTransportOptions {
  /** TCP connect timeout. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** Whole call (connect + headers + body). Default 5000 ms. */
  requestTimeoutMs?: number;
  /** Concurrent connections to the node. Default 8. */
  connections?: number;
}

export interface ZlmNodeAddress {
  /** ZLM mediaServerId, for error context and logs. */
  readonly id: string;
  readonly apiBaseUrl: string;
  readonly secret: string;
}

export type ZlmParams = Record<string, string | number | boolean | undefined>;
export type ZlmJson = Record<string, unknown>;

export interface ZlmBinary {
  contentType: string;
  body: Buffer;
}

export interface ZlmTransport {
  /** Calls the API and resolves with the JSON envelope when `code == 0`. */
  callJson(api: string, params: ZlmParams): Promise<ZlmJson>;
  /** For APIs answering with bytes (getSnap); a JSON answer is treated as ZLM's error envelope. */
  callBinary(api: string, params: ZlmParams, maxBytes: number): Promise<ZlmBinary>;
  close(): Promise<void>;
}

/**
 * Every finished call is published here for metrics and tracing (STYLE §9: the library never logs).
 * Message: ZlmCallEvent. The secret is never part of it.
 */
export const ZLM_CALL_CHANNEL = 'vms:media:zlm-call';

export interface ZlmCallEvent {
  nodeId: string;
  api: string;
  durationMs: number;
  /** Undefined on success. */
  errorCode: MediaErrorCode | undefined;
}

const callChannel = channel(ZLM_CALL_CHANNEL);

const MAX_JSON_BYTES = 4 * 1024 * 1024; // getMediaList on a busy node is the largest answer

// Reachability failures (no answer was possible) versus a node that accepted and then went silent.
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_ABORTED']);
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);

export function createZlmTransport(node: ZlmNodeAddress, opts: ZlmTransportOptions = {}): ZlmTransport {
  const base = new URL(node.apiBaseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const requestTimeoutMs = opts.requestTimeoutMs ?? 5000;
  const pool = new Pool(base.origin, {
    connections: opts.connections ?? 8,
    connect: { timeout: opts.connectTimeoutMs ?? 1000 },
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
  });
  let closed = false;

  const fail = (code: MediaErrorCode, api: string, message: string, cause?: unknown, extra?: { zlmCode: number; zlmMsg: string }): ZlmCallError =>
    new ZlmCallError(code, `${node.id} ${api}: ${message}`, { nodeId: node.id, api, ...extra }, cause === undefined ? undefined : { cause });

  const send = async (api: string, params: ZlmParams, maxBytes: number): Promise<{ contentType: string; body: Buffer }> => {
    if (closed) throw fail('MEDIA_ERR_CLOSED', api, 'client is closed');
    const query = new URLSearchParams({ secret: node.secret });
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined) query.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
    }
    const deadline = AbortSignal.timeout(requestTimeoutMs);
    try {
      const res = await pool.request({ method: 'GET', path: `${basePath}/index/api/${api}?${query.toString()}`, signal: deadline });
      const body = await readCapped(res.body, maxBytes);
      if (body === undefined) throw fail('MEDIA_ERR_BAD_RESPONSE', api, `answer larger than ${maxBytes} bytes`);
      if (res.statusCode !== 200) throw fail('MEDIA_ERR_BAD_RESPONSE', api, `HTTP ${res.statusCode}`);
      const ct = res.headers['content-type'];
      return { contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '', body };
    } catch (err) {
      if (err instanceof ZlmCallError) throw err;
      throw classify(err, deadline.aborted, api);
    }
  };

  const observed = async <T>(api: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    let errorCode: MediaErrorCode | undefined;
    try {
      return await fn();
    } catch (err) {
      errorCode = (err as ZlmCallError).code;
      throw err;
    } finally {
      if (callChannel.hasSubscribers) {
        callChannel.publish({ nodeId: node.id, api, durationMs: performance.now() - t0, errorCode } satisfies ZlmCallEvent);
      }
    }
  };

  const classify = (err: unknown, timedOut: boolean, api: string): ZlmCallError => {
    const code = errorCode(err);
    if (closed || (code !== undefined && CLOSED_CODES.has(code))) return fail('MEDIA_ERR_CLOSED', api, 'client is closed', err);
    // AbortSignal.timeout rejects with a DOMException named TimeoutError (or undici wraps it as aborted)
    if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
      return fail('MEDIA_ERR_TIMEOUT', api, `no answer within ${requestTimeoutMs} ms`, err);
    }
    if (code !== undefined && UNREACHABLE_CODES.has(code)) return fail('MEDIA_ERR_UNREACHABLE', api, `unreachable (${code})`, err);
    // a broken answer (parser error, length mismatch) or anything unforeseen: the node gave no usable answer
    return fail('MEDIA_ERR_UNREACHABLE', api, `request failed${code === undefined ? '' : ` (${code})`}`, err);
  };

  const envelope = (api: string, body: Buffer): ZlmJson => {
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw fail('MEDIA_ERR_BAD_RESPONSE', api, 'answer is not JSON', err);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw fail('MEDIA_ERR_BAD_RESPONSE', api, 'answer is not a JSON object');
    const o = json as ZlmJson;
    if (typeof o.code !== 'number') throw fail('MEDIA_ERR_BAD_RESPONSE', api, 'answer has no numeric code');
    if (o.code !== 0) {
      const zlmMsg = typeof o.msg === 'string' ? o.msg : '';
      throw fail('MEDIA_ERR_API', api, `ZLM code ${o.code}: ${zlmMsg}`, undefined, { zlmCode: o.code, zlmMsg });
    }
    return o;
  };

  return {
    callJson: (api, params) =>
      observed(api, async () => {
        const { body } = await send(api, params, MAX_JSON_BYTES);
        return envelope(api, body);
      }),
    callBinary: (api, params, maxBytes) =>
      observed(api, async () => {
        const res = await send(api, params, maxBytes);
        if (res.contentType.startsWith('application/json')) {
          envelope(api, res.body); // throws MEDIA_ERR_API for an error envelope
          throw fail('MEDIA_ERR_BAD_RESPONSE', api, 'expected bytes, got a JSON success envelope');
        }
        return res;
      }),
    async close() {
      if (closed) return;
      closed = true;
      // destroy, not close: close() would wait for calls in flight; they are rejected instead (STYLE §3)
      await pool.destroy().catch(() => undefined);
    },
  };
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined || cause === err ? undefined : errorCode(cause);
}

/** The body, or undefined when it exceeds `max` (the rest is discarded, the socket freed). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
