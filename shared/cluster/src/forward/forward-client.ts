/**
 * The sending side of owner forwarding (SPEC ROUTE-3..5): one undici Pool per owner origin, keep-alive
 * connections (a forward over a warm connection costs one loopback/LAN round trip), a short connect
 * timeout so a dead owner fails fast, and a read timeout chosen per request (per endpoint).
 *
 * Correlated waits (STYLE 8): every forward has an id (also sent as a header), sits in a pending map
 * until it settles, is removed from the map before it settles, and is rejected by close(). Failures
 * are typed per phase: ForwardConnectError (refused / timeout / unreachable), ForwardTimeoutError
 * (headers / body), ForwardResponseError (connection broke mid-exchange, oversized answer). Nothing is
 * retried: a forwarded PTZ or device control must never run twice.
 */
import { randomBytes } from 'node:crypto';
import { Pool, type Dispatcher } from 'undici';
import { ForwardConnectError, ForwardResponseError, ForwardTimeoutError, StoreClosedError, type ClusterError } from '../errors.ts';
import { FORWARD_HEADERS, MAX_FORWARD_CONNECT_TIMEOUT_MS } from './forward-protocol.ts';

export interface ForwardTarget {
  /** Owner node code (for errors and logs). */
  readonly node: string;
  /** The owner's internal base URL (`http://10.0.0.12:18080`, a path prefix is kept). */
  readonly baseUrl: string;
}

export interface ForwardRequest {
  readonly method: string;
  /** Path and query exactly as this instance received them (ROUTE-3, ROUTE-7). Starts with `/`. */
  readonly path: string;
  /** Headers to pass on (the caller's auth token, Content-Type); protocol headers are added here. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | null;
  /** Longest wait from the dispatch for the owner's response headers, then between body chunks. */
  readonly readTimeoutMs: number;
}

export interface ForwardResponse {
  readonly forwardId: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly body: Buffer;
}

export interface ForwardClientOptions {
  /** This instance's node code, sent in the forwarded marker. */
  readonly originNode: string;
  /** node-forward-secret; the client exists only when one is configured (ROUTE-6). */
  readonly secret: string;
  /** Default 500 ms; never more than 1000 ms (ROUTE-5). */
  readonly connectTimeoutMs?: number;
  /** Connections kept per owner. Default 64. */
  readonly connectionsPerTarget?: number;
  /** Idle keep-alive connections are closed after this. Default 30 s. */
  readonly keepAliveTimeoutMs?: number;
  /** Larger answers fail with ForwardResponseError. Default 16 MiB. */
  readonly maxResponseBytes?: number;
}

export interface ForwardClient {
  /** Rejects with the typed errors above or StoreClosedError; never with an undici error. */
  forward(target: ForwardTarget, request: ForwardRequest): Promise<ForwardResponse>;
  /** Forwards in flight. */
  readonly pendingCount: number;
  /** Idempotent: rejects pending forwards with StoreClosedError and drops every connection. */
  close(): Promise<void>;
}

interface Target {
  readonly pool: Pool;
  /** Path prefix of the base URL, without a trailing slash. */
  readonly prefix: string;
}

const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'ECONNABORTED']);

export function createForwardClient(opts: ForwardClientOptions): ForwardClient {
  if (opts.secret === '') throw new RangeError('forward client needs a non-empty secret (ROUTE-6)');
  const connectTimeout = Math.min(opts.connectTimeoutMs ?? 500, MAX_FORWARD_CONNECT_TIMEOUT_MS);
  const maxBytes = opts.maxResponseBytes ?? 16 * 1024 * 1024;
  const pools = new Map<string, Pool>();
  /** baseUrl → its pool (shared per origin) and path prefix; parsed once. */
  const targets = new Map<string, Target>();
  /** forward id → reject of its caller. */
  const pending = new Map<string, (err: unknown) => void>();
  // Forward ids: unique per process (random prefix) and cheap (a counter), for correlating logs.
  const idPrefix = randomBytes(4).toString('hex');
  let seq = 0;
  let closed = false;

  const targetOf = (baseUrl: string): Target => {
    let t = targets.get(baseUrl);
    if (t === undefined) {
      const base = new URL(baseUrl);
      let pool = pools.get(base.origin);
      if (pool === undefined) {
        pool = new Pool(base.origin, {
          connections: opts.connectionsPerTarget ?? 64,
          pipelining: 1,
          connectTimeout,
          keepAliveTimeout: opts.keepAliveTimeoutMs ?? 30_000,
          keepAliveMaxTimeout: opts.keepAliveTimeoutMs ?? 30_000,
        });
        pools.set(base.origin, pool);
      }
      t = { pool, prefix: base.pathname.replace(/\/+$/, '') };
      targets.set(baseUrl, t);
    }
    return t;
  };

  const exchange = (target: ForwardTarget, req: ForwardRequest, forwardId: string): Promise<ForwardResponse> => {
    const { pool, prefix } = targetOf(target.baseUrl);
    // Header names as a flat list: undici takes it as is (no per-request object walk on its side).
    const headers: string[] = [];
    for (const name in req.headers) {
      const lower = name.toLowerCase();
      if (lower !== FORWARD_HEADERS.marker && lower !== FORWARD_HEADERS.secret && lower !== FORWARD_HEADERS.forwardId) {
        headers.push(lower, req.headers[name] as string);
      }
    }
    headers.push(FORWARD_HEADERS.marker, opts.originNode, FORWARD_HEADERS.secret, opts.secret, FORWARD_HEADERS.forwardId, forwardId);
    return new Promise<ForwardResponse>((resolve, reject) => {
      const collect = collectingHandler({ node: target.node, forwardId, readTimeoutMs: req.readTimeoutMs, maxBytes, resolve, reject });
      try {
        pool.dispatch(
          {
            method: req.method as 'GET',
            path: `${prefix}${req.path}`,
            headers,
            body: req.body === null || req.body.length === 0 ? null : req.body,
            // the read timeout is the handler's own timer (see collectingHandler); undici's are off
            headersTimeout: 0,
            bodyTimeout: 0,
          },
          collect.handler,
        );
      } catch (err) {
        collect.fail(toForwardError(err, target.node, req.readTimeoutMs));
      }
    });
  };

  return {
    forward(target, req) {
      if (closed) return Promise.reject(new StoreClosedError('forward client is closed'));
      const forwardId = `${idPrefix}-${(++seq).toString(36)}`;
      return new Promise<ForwardResponse>((resolve, reject) => {
        pending.set(forwardId, reject);
        exchange(target, req, forwardId).then(
          (res) => {
            if (pending.delete(forwardId)) resolve(res); // delete before settle: close() may have won
          },
          (err: unknown) => {
            if (pending.delete(forwardId)) reject(err);
          },
        );
      });
    },
    get pendingCount() {
      return pending.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      const err = new StoreClosedError('forward client closed before the owner answered');
      for (const [id, reject] of pending) {
        pending.delete(id);
        reject(err);
      }
      // destroying the pools aborts the exchanges in flight; their late failures find no caller
      await Promise.all([...pools.values()].map((pool) => pool.destroy().catch(() => undefined)));
      pools.clear();
      targets.clear();
    },
  } satisfies ForwardClient;
}

interface Collect {
  readonly node: string;
  readonly forwardId: string;
  readonly readTimeoutMs: number;
  readonly maxBytes: number;
  readonly resolve: (res: ForwardResponse) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The answer of one forward, collected straight from undici's dispatcher callbacks: status, the
 * Content-Type header and the body chunks. No response stream, async iterator or async resource is
 * built per forward (`pool.request()` builds all three), which keeps the forwarding instance's CPU per
 * request low. Settles exactly once.
 *
 * The read timeout is a native timer here, from dispatch to the response headers and then between body
 * chunks. undici's own headers/body timeouts run on its coarse timers (a shared clock advanced 0.5 s per
 * tick, each tick a timer of its own): a 3 s read timeout fired after 3.0–3.5 s on a quiet machine and
 * later still as the event loop lagged, past the answer bound a partitioned owner must keep (ROUTE-5).
 */
function collectingHandler(c: Collect): { handler: Dispatcher.DispatchHandler; fail: (err: unknown) => void } {
  let status = 0;
  let contentType: string | null = null;
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  let phase: 'headers' | 'body' = 'headers';
  let controller: Dispatcher.DispatchController | null = null;
  const timer = setTimeout(() => {
    const err = new ForwardTimeoutError(c.node, phase, c.readTimeoutMs);
    fail(err);
    controller?.abort(err); // a request still queued for a connection is aborted when it starts
  }, c.readTimeoutMs);
  const fail = (err: unknown): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    c.reject(err);
  };
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(ctrl) {
      controller = ctrl;
      if (settled) ctrl.abort(new ForwardTimeoutError(c.node, phase, c.readTimeoutMs));
    },
    onResponseStart(_controller, statusCode, headers) {
      if (statusCode < 200) return; // 1xx: the final answer follows
      status = statusCode;
      phase = 'body';
      timer.refresh();
      const ct = headers['content-type'];
      contentType = typeof ct === 'string' ? ct : (ct?.[0] ?? null);
    },
    onResponseData(ctrl, chunk) {
      size += chunk.length;
      if (size > c.maxBytes) {
        fail(new ForwardResponseError(c.node, { cause: new RangeError(`response larger than ${c.maxBytes} bytes`) }));
        ctrl.abort(new RangeError('response too large')); // drops the connection; its error finds us settled
        return;
      }
      timer.refresh();
      chunks.push(chunk);
    },
    onResponseEnd() {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      c.resolve({
        forwardId: c.forwardId,
        status,
        contentType,
        body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
      });
    },
    onResponseError(_controller, err) {
      fail(toForwardError(err, c.node, c.readTimeoutMs));
    },
  };
  return { handler, fail };
}

/** Maps whatever undici / the socket threw, by its stable `code`, to the phase it failed in. */
export function toForwardError(err: unknown, node: string, readTimeoutMs: number): ClusterError {
  if (err instanceof ForwardResponseError || err instanceof ForwardConnectError || err instanceof ForwardTimeoutError) return err;
  if (err instanceof StoreClosedError) return err;
  const code = errorCode(err);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new ForwardConnectError(node, 'timeout', { cause: err });
  if (code === 'ECONNREFUSED') return new ForwardConnectError(node, 'refused', { cause: err });
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return new ForwardConnectError(node, 'unreachable', { cause: err });
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new ForwardTimeoutError(node, 'headers', readTimeoutMs, { cause: err });
  if (code === 'UND_ERR_BODY_TIMEOUT') return new ForwardTimeoutError(node, 'body', readTimeoutMs, { cause: err });
  // anything else (reset, closed mid-answer, parse error): the request may have reached the owner
  return new ForwardResponseError(node, { cause: err });
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // happy-eyeballs connects report an AggregateError of the per-address failures
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.length > 0) return errorCode(inner[0]);
  return undefined;
}
