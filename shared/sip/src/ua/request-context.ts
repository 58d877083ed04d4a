import type { HeaderInput } from '../message/header-input.ts';
import type { SipRequest, SipResponse } from '../message/types.ts';
import type { Flow } from '../transport/flow.ts';

export interface ReplyOptions {
  reason?: string;
  headers?: HeaderInput;
  body?: Buffer | string;
  contentType?: string;
}

/**
 * What any request handler gets besides the request, in or out of a dialog. Kept apart from ServerContext
 * (which can accept() into a Dialog) so the dialog layer depends on it without depending back on itself.
 */
export interface RequestContext {
  readonly request: SipRequest;
  /** Where the request came from: store it as the device's flow to reach it behind NAT. */
  readonly flow: Flow;
  /** Aborted when the peer CANCELs this INVITE (a 487 has then been sent) or the stack closes. */
  readonly signal: AbortSignal;
  /** A final response has been sent. */
  readonly finalSent: boolean;
  /** The To-tag used for every response but 100 (RFC 3261 §8.2.6.2). */
  readonly toTag: string;
  /** Sends a response; throws SIP_ERR_INVALID_STATE after the final one (a 2xx to a dialog-creating INVITE goes through accept(); a re-INVITE's is sent once). */
  reply(status: number, opts?: ReplyOptions): SipResponse;
}
