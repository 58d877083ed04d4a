// The control API's HTTP server (SPEC SEC-3): every connection and request is bounded whatever the
// peer does. node:http's own defaults are not enough (fastify turns `requestTimeout` off, and a
// request body may trickle for ever): headers must arrive within `headersTimeoutMs`, the whole request
// (headers and body) within `requestTimeoutMs` (node answers 408 and closes), an idle keep-alive
// connection is closed after `keepAliveTimeoutMs`, a silent socket after `idleTimeoutMs`; at most
// `maxConnections` sockets are open and at most `maxConnectionsPerIp` from one address (further ones
// are closed at once). Request bodies are bounded by fastify's `bodyLimit` (413, app.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

export interface HttpLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** No byte either way for this long: the socket is destroyed (fastify's `connectionTimeout`). */
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
  /** Largest request body, bytes (fastify `bodyLimit`; the edge forwards nothing larger). */
  readonly bodyLimit: number;
  /** Largest body of a media hook (`/vms/webhook/*`): ZLM posts small JSON. */
  readonly webhookBodyLimit: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000, // fastify's default: above the forward client's 30 s keep-alive, so it closes first
  idleTimeoutMs: 120_000, // above the longest device wait a request may hold (catalog sync, record query)
  maxConnections: 10_000,
  maxConnectionsPerIp: 512, // other instances forward over up to 64 connections each; a proxy may front many operators
  bodyLimit: 1024 * 1024,
  webhookBodyLimit: 64 * 1024,
});

/** The request listener run before fastify's (the edge, edge.ts): true when it took the request. */
export type PreHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * fastify's `serverFactory`: a node:http server with the limits above and, when given, the edge in
 * front of fastify's handler. fastify's own timeout options are ignored: these limits are the truth.
 */
export function boundedServerFactory(limits: HttpLimits, edge: PreHandler | null, log: FastifyBaseLogger) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void, opts: { maxRequestsPerSocket?: number }): Server => {
    const server = createServer(
      {
        headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs), // node requires ≤
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // node checks the two timeouts above on this period (default 30 s): a bound is only as tight as its check
        connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
      },
      edge === null ? handler : (req, res) => {
        if (!edge(req, res)) handler(req, res);
      },
    );
    server.setTimeout(limits.idleTimeoutMs);
    server.maxConnections = limits.maxConnections;
    if (opts.maxRequestsPerSocket !== undefined && opts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
    capPerAddress(server, limits.maxConnectionsPerIp, log);
    server.on('drop', (data?: { remoteAddress?: string }) => refused(log, data?.remoteAddress, 'max-connections'));
    return server;
  };
}

let lastRefusalLog = 0;
/** One line per second at most: a flood of refused connections must not become a flood of logs. */
function refused(log: FastifyBaseLogger, remote: string | undefined, why: 'max-connections' | 'per-ip'): void {
  const now = Date.now();
  if (now - lastRefusalLog < 1000) return;
  lastRefusalLog = now;
  log.warn({ remote, why }, 'http connection refused over the limit');
}

function capPerAddress(server: Server, max: number, log: FastifyBaseLogger): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? '';
    const n = open.get(ip) ?? 0;
    if (n >= max) {
      refused(log, ip, 'per-ip');
      socket.destroy();
      return;
    }
    open.set(ip, n + 1);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left <= 0) open.delete(ip);
      else open.set(ip, left);
    });
  });
}
