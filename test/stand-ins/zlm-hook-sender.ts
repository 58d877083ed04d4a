/**
 * How the stand-in media node calls its hooks: like ZLM, a JSON POST to `<hook base>/<hook name>`
 * keeping the base URL's query string (where the platform's `?secret=` lives), `mediaServerId`
 * added to every body, a timeout (ZLM hook.timeoutSec), failures swallowed. Every call is recorded
 * so tests can look at what was sent and answered.
 */
import { request } from 'undici';

export interface HookCall {
  readonly name: string;
  readonly body: Record<string, unknown>;
  /** The receiver's JSON reply, when there was one. */
  reply: Record<string, unknown> | undefined;
  status: number | undefined;
  error: string | undefined;
}

export class StandInHookSender {
  readonly calls: HookCall[] = [];
  readonly #base: string;
  readonly #mediaServerId: string;
  readonly #timeoutMs: number;
  #closed = false;

  constructor(base: string, mediaServerId: string, timeoutMs: number) {
    this.#base = base;
    this.#mediaServerId = mediaServerId;
    this.#timeoutMs = timeoutMs;
  }

  /** Resolves with the reply (undefined when hooks are off, or the call failed); never rejects. */
  async fire(name: string, body: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    if (this.#base === '' || this.#closed) return undefined;
    const call: HookCall = { name, body: { ...body, mediaServerId: this.#mediaServerId }, reply: undefined, status: undefined, error: undefined };
    this.calls.push(call);
    try {
      const res = await request(hookUrl(this.#base, name), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(call.body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      call.status = res.statusCode;
      const text = await res.body.text();
      const json: unknown = text === '' ? undefined : JSON.parse(text);
      if (typeof json === 'object' && json !== null) call.reply = json as Record<string, unknown>;
      return call.reply;
    } catch (err) {
      call.error = err instanceof Error ? err.message : String(err);
      return undefined;
    }
  }

  close(): void {
    this.#closed = true;
  }
}

/** `http://h/vms/webhook?secret=x` + `on_publish` → `http://h/vms/webhook/on_publish?secret=x`. */
export function hookUrl(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/${name}`;
  return u.toString();
}
