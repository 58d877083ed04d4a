// The HTTP edge: owner routing before fastify (SPEC ROUTE-2..5; README "Performance").
//
// A control request for a device another instance owns only has to be passed on, yet on fastify's
// path most of its cost is the framework: request and reply objects, a child logger, the auth and
// routing hooks through promise chains. The edge looks at the raw request first and offers it to the
// edge routing only when everything the decision needs is already in memory: a route of the table
// routed by deviceId or channelId, that id in the query, and a token that passed the full verification before
// (VerifiedTokens.peek). The edge routing (cluster/edge-routing.ts) adds the channel's device from its memory of channel lookups, the owner
// from the owner cache and the owner's node from this instance's view of the node table, and takes the request only
// when it is to be forwarded. Everything else (first request of a token, a request forwarded to us, a
// cache miss, a chunked or oversized body, an app that is closing) goes through fastify as before,
// and fastify's path answers every refusal: the edge changes the cost, never the outcome.
import { FORWARD_HEADERS } from '@vms/cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { extractToken } from '../auth/bearer.ts';
import type { Principal } from '../auth/principal.ts';
import type { VerifiedTokens } from '../auth/verified-tokens.ts';
import type { Clock } from '../core/clock.ts';
import { isGbId } from '../core/gb-id.ts';
import { errorResponse, refusalLogFields } from './errors.ts';
import { publishApiFailure } from '../metrics/channels.ts';
import type { EdgeRequest, EdgeRouting } from './handler.types.ts';
import { stripServicePrefix } from './paths.ts';
import { ROUTES, ROUTING_PARAM, type RouteSpec } from './route-table.ts';

/** Routes the edge may consider: those naming their device or channel in the query (method + path → route). */
const EDGE_ROUTES: ReadonlyMap<string, RouteSpec> = new Map(
  (ROUTES as readonly RouteSpec[])
    .filter((r) => (r.routedBy === 'device' || r.routedBy === 'channel') && r.auth === 'operator')
    .map((r) => [`${r.method} ${r.path}`, r]),
);

export interface EdgeCandidate {
  readonly route: RouteSpec;
  /** The deviceId or channelId the route is routed by (a GB id). */
  readonly key: string;
}

type RawHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * Pure: the route and device of a raw request the edge may consider, or null. Null for anything the
 * edge does not handle the same way fastify would: another route, a forwarded request (the owner's
 * side of ROUTE-3), a body without a plain Content-Length or larger than `bodyLimit`, a routing key
 * (deviceId / channelId) that is missing, repeated or not a GB id (the handler answers those).
 */
export function matchEdgeRequest(method: string | undefined, url: string | undefined, headers: RawHeaders, bodyLimit: number): EdgeCandidate | null {
  if (method === undefined || url === undefined || url.includes('#')) return null;
  if (headers[FORWARD_HEADERS.marker] !== undefined || headers['transfer-encoding'] !== undefined) return null;
  const length = headers['content-length'];
  if (length !== undefined && (typeof length !== 'string' || !/^\d{1,9}$/.test(length) || Number(length) > bodyLimit)) return null;
  const normalized = stripServicePrefix(url);
  const q = normalized.indexOf('?');
  if (q < 0) return null;
  const route = EDGE_ROUTES.get(`${method} ${normalized.slice(0, q)}`);
  if (route === undefined || route.routedBy === null) return null;
  const values = new URLSearchParams(normalized.slice(q + 1)).getAll(ROUTING_PARAM[route.routedBy]);
  const key = values.length === 1 ? values[0]?.trim() : undefined;
  if (key === undefined || !isGbId(key)) return null;
  return { route, key };
}

export interface EdgeOptions {
  readonly routing: EdgeRouting;
  readonly tokens: VerifiedTokens;
  readonly signingKey: string;
  readonly clock: Clock;
  readonly bodyLimit: number;
  readonly logger: FastifyBaseLogger;
  /** True once the app started closing: fastify answers those (503, connection close). */
  readonly isClosing: () => boolean;
}

/** The edge's request listener: true when it took the request, false to let fastify run it. */
export type EdgeListener = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createEdge(o: EdgeOptions): EdgeListener {
  return (req, res) => {
    try {
      if (o.isClosing()) return false;
      const candidate = matchEdgeRequest(req.method, req.url, req.headers, o.bodyLimit);
      if (candidate === null) return false;
      const token = extractToken(req.headers);
      if (token === null) return false;
      const principal = o.tokens.peek(token, o.signingKey, o.clock.now());
      if (principal === undefined) return false;
      return o.routing(edgeRequest(req, res, candidate, principal, o.logger));
    } catch (err) {
      // never expected (the routing must not throw): fastify's path still answers the request
      o.logger.error({ err, url: req.url }, 'edge routing failed, request left to the full path');
      return false;
    }
  };
}

const JSON_TYPE = 'application/json; charset=utf-8';

function edgeRequest(req: IncomingMessage, res: ServerResponse, c: EdgeCandidate, principal: Principal, logger: FastifyBaseLogger): EdgeRequest {
  const startedAt = performance.now();
  const method = req.method as string;
  const url = req.url as string;
  const write = (status: number, contentType: string, body: Buffer | string): void => {
    if (res.headersSent || res.destroyed) return;
    const headers: OutgoingHttpHeaders = { 'content-type': contentType, 'content-length': Buffer.byteLength(body) };
    res.writeHead(status, headers);
    res.end(body);
  };
  return {
    route: c.route,
    key: c.key,
    method,
    url,
    headers: req.headers,
    principal,
    log: logger,
    body: () => readBody(req),
    answer(status, contentType, body) {
      // as fastify's reply.send(Buffer) would label an answer without a type
      write(status, contentType ?? 'application/octet-stream', body);
      logger.info({ method, url, key: c.key, statusCode: status, responseTime: performance.now() - startedAt }, 'request forwarded');
    },
    fail(err) {
      const { httpStatus, body } = errorResponse(err);
      publishApiFailure(err.code);
      write(httpStatus, JSON_TYPE, JSON.stringify(body));
      logger.info({ method, url, key: c.key, ...refusalLogFields(err), responseTime: performance.now() - startedAt }, 'request refused');
    },
  };
}

/** The body as received; its size is bounded by the Content-Length the edge accepted. */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const length = req.headers['content-length'];
  if (length === undefined || length === '0') {
    req.resume();
    return Promise.resolve(null);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('aborted', () => reject(new Error('request aborted by the client')));
  });
}
