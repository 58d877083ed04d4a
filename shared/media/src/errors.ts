/**
 * The one error catalog of @vms/media (STYLE §2): stable string codes and, in one table, whether
 * each is transient (trying again later, or on another media node, can succeed). Callers branch on
 * `code`, never on `message`. Mapping to the operator API envelope belongs to the signaling service.
 */
export const MEDIA_ERROR_INFO = Object.freeze({
  /** The node's HTTP API could not be reached: refused, reset, DNS, connect timeout. */
  MEDIA_ERR_UNREACHABLE: { transient: true },
  /** Connected, but no complete answer within the request timeout. */
  MEDIA_ERR_TIMEOUT: { transient: true },
  /** ZLM answered `code != 0` (see `zlmCode` / `zlmMsg`, e.g. -100 bad secret, -300 bad args). */
  MEDIA_ERR_API: { transient: false },
  /** An answer that is not ZLM's envelope: HTTP status != 200, not JSON, wrong content type. */
  MEDIA_ERR_BAD_RESPONSE: { transient: false },
  /** The client, registry or allocator was closed. */
  MEDIA_ERR_CLOSED: { transient: false },
  /** A hook name this platform does not handle (`/vms/webhook/<name>`). */
  MEDIA_ERR_HOOK_UNKNOWN: { transient: false },
  /** A hook body that is not the JSON object ZLM sends for that hook. */
  MEDIA_ERR_HOOK_BODY: { transient: false },
  /** A hook from an unknown `mediaServerId`, or without the node's secret. */
  MEDIA_ERR_HOOK_AUTH: { transient: false },
  /** No enabled, healthy media node can take a new stream. */
  MEDIA_ERR_NO_NODE: { transient: true },
  /** All SSRC sequence numbers of a node are in use. */
  MEDIA_ERR_SSRC_EXHAUSTED: { transient: true },
  /** A media node record that cannot work (bad URL, port range, weight, empty secret). */
  MEDIA_ERR_INVALID_NODE: { transient: false },
  /** A media store (MySQL node table, Redis SSRC claims) is unreachable or shed the statement. */
  MEDIA_ERR_STORE_UNAVAILABLE: { transient: true },
  /** A media store rejected the statement or script (missing table, bad grant, script error). */
  MEDIA_ERR_STORE_QUERY: { transient: false },
} as const);

export type MediaErrorCode = keyof typeof MEDIA_ERROR_INFO;

export class MediaError extends Error {
  override readonly name: string = 'MediaError';
  readonly code: MediaErrorCode;

  constructor(code: MediaErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  get transient(): boolean {
    return MEDIA_ERROR_INFO[this.code].transient;
  }
}

export interface ZlmCallContext {
  /** Media node id (ZLM `general.mediaServerId`). */
  nodeId: string;
  /** ZLM API name, e.g. `openRtpServer`. */
  api: string;
  /** For MEDIA_ERR_API: ZLM's `code` (ApiErr: -1 failed, -100 auth, -300 invalid args, -400 exception). */
  zlmCode?: number;
  /** For MEDIA_ERR_API: ZLM's `msg`. */
  zlmMsg?: string;
}

/** Everything ZlmClient rejects with. Messages never contain the node secret. */
export class ZlmCallError extends MediaError {
  override readonly name = 'ZlmCallError';
  readonly nodeId: string;
  readonly api: string;
  readonly zlmCode: number | undefined;
  readonly zlmMsg: string | undefined;

  constructor(code: MediaErrorCode, message: string, ctx: ZlmCallContext, options?: ErrorOptions) {
    super(code, message, options);
    this.nodeId = ctx.nodeId;
    this.api = ctx.api;
    this.zlmCode = ctx.zlmCode;
    this.zlmMsg = ctx.zlmMsg;
  }
}

export function isMediaError(err: unknown): err is MediaError {
  return err instanceof MediaError;
}
