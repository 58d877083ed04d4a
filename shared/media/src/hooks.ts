/**
 * The pure core of `POST /vms/webhook/:hook` (SPEC §12, ROUTE-7: exempt from operator auth and from
 * owner routing). A hook is trusted only when its `mediaServerId` names a known media node *and* the
 * hook URL carries that node's secret (`?secret=`, set in the ZLM hook configuration), compared in
 * constant time. The HTTP plugin around this lives in the signaling service.
 *
 * Replies follow ZLM's envelope: `code: 0` accepts. For on_publish a non-zero code refuses the push,
 * which is exactly what an unauthenticated publish must get.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { MediaError } from './errors.ts';
import { hookSenderId, isMediaHookName, parseHookBody, type MediaHookEvent, type Publish, type StreamNoneReader } from './hook-events.ts';

/** ZLM ApiErr values used in hook replies. */
const ZLM_OK = 0;
const ZLM_AUTH_FAILED = -100;
const ZLM_INVALID_ARGS = -300;
const ZLM_FAILED = -1;

export type HookReply = { code: number; msg: string } & Record<string, unknown>;

export type HookResult =
  | { ok: true; httpStatus: 200; reply: HookReply; event: MediaHookEvent }
  | { ok: false; httpStatus: 400 | 401 | 404; reply: HookReply; event: null; error: MediaError };

/** Finds a node by ZLM mediaServerId (a snapshot of the registry: the handler stays synchronous). */
export type HookNodeLookup = (mediaServerId: string) => { readonly secret: string } | undefined;

/** Stream options ZLM accepts in the on_publish reply (enable_hls, enable_mp4, …). */
export type PublishReplyOptions = Record<string, boolean | number | string>;

export interface HookHandlerOptions {
  lookupNode: HookNodeLookup;
  /** Extra fields of the on_publish reply. Default: audio on, no MP4 recording. */
  publishReply?: (event: Publish) => PublishReplyOptions;
  /** Whether ZLM may close a stream nobody watches. Default true: the platform BYEs the device itself. */
  closeWhenNoReader?: (event: StreamNoneReader) => boolean;
}

export type HookQuery = Readonly<Record<string, unknown>>;

export type HookHandler = (name: string, body: unknown, query: HookQuery) => HookResult;

const DEFAULT_PUBLISH_REPLY: PublishReplyOptions = { enable_audio: true, enable_mp4: false };

export function createHookHandler(opts: HookHandlerOptions): HookHandler {
  return (name, body, query) => {
    if (!isMediaHookName(name)) {
      return refuse(404, ZLM_FAILED, new MediaError('MEDIA_ERR_HOOK_UNKNOWN', `unknown hook ${JSON.stringify(name.slice(0, 64))}`));
    }
    // authenticate before parsing further, so an outsider learns nothing about the body format
    const senderId = hookSenderId(name, body);
    if (senderId === undefined) return refuse(400, ZLM_INVALID_ARGS, new MediaError('MEDIA_ERR_HOOK_BODY', `${name}: missing mediaServerId`));
    const node = opts.lookupNode(senderId);
    if (node === undefined) return refuse(401, ZLM_AUTH_FAILED, new MediaError('MEDIA_ERR_HOOK_AUTH', `${name}: unknown media node`));
    if (!secretMatches(node.secret, query.secret)) {
      return refuse(401, ZLM_AUTH_FAILED, new MediaError('MEDIA_ERR_HOOK_AUTH', `${name}: secret missing or wrong`));
    }
    let event: MediaHookEvent;
    try {
      event = parseHookBody(name, body);
    } catch (err) {
      if (err instanceof MediaError) return refuse(400, ZLM_INVALID_ARGS, err);
      throw err;
    }
    return { ok: true, httpStatus: 200, reply: replyFor(event, opts), event };
  };
}

function replyFor(event: MediaHookEvent, opts: HookHandlerOptions): HookReply {
  switch (event.kind) {
    case 'publish':
      return { ...(opts.publishReply?.(event) ?? DEFAULT_PUBLISH_REPLY), code: ZLM_OK, msg: 'success' };
    case 'stream_none_reader':
      return { code: ZLM_OK, msg: 'success', close: opts.closeWhenNoReader?.(event) ?? true };
    default:
      return { code: ZLM_OK, msg: 'success' };
  }
}

function refuse(httpStatus: 400 | 401 | 404, code: number, error: MediaError): HookResult {
  return { ok: false, httpStatus, reply: { code, msg: error.message }, event: null, error };
}

/**
 * Constant-time comparison of the configured secret and the `secret` query value. Both sides are
 * hashed first so the comparison time does not reveal the secret's length either. A repeated
 * `?secret=` (array) is refused rather than guessed.
 */
export function secretMatches(expected: string, given: unknown): boolean {
  if (expected === '' || typeof given !== 'string') return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}
