// The receiving side of `POST /vms/webhook/:hook` (SPEC §12, ROUTE-7): authenticate the hook by its
// node secret (createHookHandler), then run it here or forward it to the instance holding the stream
// (hook-route.ts decides). A forward reuses the owner-forwarding client and protocol (marker, shared
// secret, path and body bytes as received) and writes the holder's status, Content-Type and body back
// unchanged, so ZLM gets the holder's answer (on_stream_none_reader `close`). Whatever goes wrong on
// the way, the hook runs here and ZLM gets an answer: never a 5xx.
import type { IncomingHttpHeaders } from 'node:http';
import { FORWARD_HEADERS, type ForwardClient } from '@vms/cluster';
import type { HookHandler, HookQuery, HookReply, HookResult } from '@vms/media';
import type { FastifyBaseLogger } from 'fastify';
import { classifyInbound } from '../cluster/route-decision.ts';
import { hookStream, routeHookFirst, routeHookToHolder, type HolderLookup, type HookStreamRef } from './hook-route.ts';
import type { MediaSessionManager } from './media-session-manager.ts';
import type { StreamHolderDirectory } from './stream-holders.port.ts';

/** ZLM waits hook.timeoutSec (10 s by default) for an answer; the holder answers at once. */
export const HOOK_FORWARD_TIMEOUT_MS = 3000;

const JSON_TYPE = 'application/json; charset=utf-8';
const ZLM_AUTH_FAILED = -100; // ZLM ApiErr

export interface HookRequest {
  readonly name: string;
  readonly body: unknown;
  /** The body bytes as received (forwarded unchanged). */
  readonly rawBody: Buffer | null;
  readonly query: HookQuery;
  readonly headers: IncomingHttpHeaders;
  /** Path and query exactly as received, prefix included (ROUTE-3). */
  readonly path: string;
  readonly log: FastifyBaseLogger;
}

export interface HookAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer | HookReply;
}

export interface HookReceiverDeps {
  readonly self: string;
  readonly hooks: HookHandler;
  readonly sessions: Pick<MediaSessionManager, 'onHook' | 'holds'>;
  /** node-forward-secret; null: forwarded hooks are refused (ROUTE-6). */
  readonly forwardSecret: string | null;
  /** null standalone: every hook runs here. */
  readonly holders: StreamHolderDirectory | null;
  /** null: the forwarding channel is closed; hooks run where they land. */
  readonly forwarder: ForwardClient | null;
  /** The holder's internal base URL while it is online in the node table (ROUTE-5), else null. */
  readonly onlineBaseUrl: (code: string) => Promise<string | null>;
  readonly forwardTimeoutMs?: number;
}

export type HookReceiver = (req: HookRequest) => Promise<HookAnswer>;

export function createHookReceiver(d: HookReceiverDeps): HookReceiver {
  const runHere = (result: Extract<HookResult, { ok: true }>): HookAnswer => {
    d.sessions.onHook(result.event);
    return { status: result.httpStatus, contentType: JSON_TYPE, body: result.reply };
  };

  const lookupHolder = async (stream: HookStreamRef, holders: StreamHolderDirectory, log: FastifyBaseLogger): Promise<HolderLookup> => {
    try {
      const node = await holders.holderOf(stream.nodeId, stream.streamId);
      return node === null ? { kind: 'none' } : { kind: 'holder', node };
    } catch (err) {
      log.warn({ err, ...stream }, 'stream holder lookup failed, media hook handled here');
      return { kind: 'unavailable' };
    }
  };

  /** The holder's answer, or null when the hook could not be delivered (then it runs here). */
  const forward = async (holder: string, forwarder: ForwardClient, req: HookRequest, log: FastifyBaseLogger): Promise<HookAnswer | null> => {
    let baseUrl: string | null;
    try {
      baseUrl = await d.onlineBaseUrl(holder);
    } catch (err) {
      log.warn({ err, holder }, 'node table unavailable, media hook handled here');
      return null;
    }
    if (baseUrl === null) {
      log.info({ holder }, 'stream holder offline, media hook handled here');
      return null;
    }
    const contentType = req.headers['content-type'];
    try {
      const res = await forwarder.forward(
        { node: holder, baseUrl },
        {
          method: 'POST',
          path: req.path,
          headers: typeof contentType === 'string' ? { 'content-type': contentType } : {},
          body: req.rawBody,
          readTimeoutMs: d.forwardTimeoutMs ?? HOOK_FORWARD_TIMEOUT_MS,
        },
      );
      log.debug({ holder, forwardId: res.forwardId, status: res.status }, 'media hook forwarded to holder');
      return { status: res.status, contentType: res.contentType ?? JSON_TYPE, body: res.body };
    } catch (err) {
      log.warn({ err, holder }, 'media hook forward failed, handled here');
      return null;
    }
  };

  return async (req) => {
    const log = req.log.child({ hook: req.name });
    const inbound = classifyInbound(req.headers[FORWARD_HEADERS.marker], req.headers[FORWARD_HEADERS.secret], d.forwardSecret);
    const result = inbound === 'forged' ? null : d.hooks(req.name, req.body, req.query);
    if (result === null) {
      log.warn({ from: req.headers[FORWARD_HEADERS.marker], forwardingOpen: d.forwardSecret !== null }, 'forwarded media hook refused');
      return { status: 403, contentType: JSON_TYPE, body: { code: ZLM_AUTH_FAILED, msg: 'forwarded hook refused' } };
    }
    if (!result.ok) {
      log.info({ code: result.error.code }, 'media hook refused');
      return { status: result.httpStatus, contentType: JSON_TYPE, body: result.reply };
    }
    const stream = hookStream(result.event);
    let route = routeHookFirst({
      inbound,
      stream,
      heldHere: stream !== null && d.sessions.holds(stream.nodeId, stream.streamId),
      clustered: d.holders !== null,
    });
    if (route.action === 'lookup' && stream !== null && d.holders !== null) {
      route = routeHookToHolder(d.self, await lookupHolder(stream, d.holders, log), d.forwarder !== null);
    }
    if (route.action === 'forward' && d.forwarder !== null) {
      const answer = await forward(route.holder, d.forwarder, req, log.child({ ...stream }));
      if (answer !== null) return answer;
    } else if (route.action === 'local' && route.why === 'forwarding-closed') {
      log.info({ ...stream }, 'media hook for a stream of another instance, forwarding disabled (no node-forward-secret): handled here');
    }
    log.debug({ route: route.action === 'local' ? route.why : route.action }, 'media hook');
    return runHere(result);
  };
}
