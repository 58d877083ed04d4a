import { getCallId, getFrom, getTo } from '../message/accessors.ts';
import type { SipMessage } from '../message/types.ts';
import type { Dialog } from './dialog.ts';
import { dialogId } from './dialog-state.ts';

/**
 * Dialogs by id (Call-ID, local tag, remote tag — RFC 3261 §12), with one tolerance: a dialog whose
 * remote tag is unknown (a GB28181 device answered without a To-tag) or a peer that drops its tag
 * later is still found by Call-ID + local tag, as long as that is unambiguous.
 */
export class DialogRegistry {
  readonly #byId = new Map<string, Dialog>();
  readonly #byLocal = new Map<string, Set<Dialog>>();

  get size(): number {
    return this.#byId.size;
  }

  add(d: Dialog): void {
    this.#byId.set(d.id, d);
    const k = `${d.callId};${d.localTag}`;
    let set = this.#byLocal.get(k);
    if (set === undefined) this.#byLocal.set(k, (set = new Set()));
    set.add(d);
  }

  remove(d: Dialog): void {
    if (this.#byId.get(d.id) === d) this.#byId.delete(d.id);
    const k = `${d.callId};${d.localTag}`;
    const set = this.#byLocal.get(k);
    set?.delete(d);
    if (set?.size === 0) this.#byLocal.delete(k);
  }

  find(callId: string, localTag: string, remoteTag: string): Dialog | undefined {
    const exact = this.#byId.get(dialogId(callId, localTag, remoteTag));
    if (exact !== undefined) return exact;
    const set = this.#byLocal.get(`${callId};${localTag}`);
    if (set === undefined || set.size !== 1) return undefined;
    const [only] = set;
    return only !== undefined && (only.remoteTag === '' || remoteTag === '') ? only : undefined;
  }

  /** The dialog an incoming request belongs to: local tag = To tag, remote tag = From tag (§12.2.2). */
  findForRequest(msg: SipMessage): Dialog | undefined {
    const localTag = getTo(msg).params.get('tag');
    if (localTag === undefined || localTag === null) return undefined;
    return this.find(getCallId(msg), localTag, getFrom(msg).params.get('tag') ?? '');
  }

  /** The dialog a response to one of our requests belongs to: local tag = From tag, remote = To tag. */
  findForResponse(msg: SipMessage): Dialog | undefined {
    const localTag = getFrom(msg).params.get('tag');
    if (localTag === undefined || localTag === null) return undefined;
    return this.find(getCallId(msg), localTag, getTo(msg).params.get('tag') ?? '');
  }

  all(): Dialog[] {
    return [...this.#byId.values()];
  }
}
