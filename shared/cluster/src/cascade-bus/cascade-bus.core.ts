/**
 * What every CascadeEventBus transport shares: envelopes, the handler set, decoding at receipt,
 * handler isolation (one failing handler neither stops the others nor reaches the transport) and the
 * counters. Transports only move strings.
 */
import { randomUUID } from 'node:crypto';
import { systemClock } from '../clock.ts';
import { decodeCascadeEvent, encodeCascadeEvent } from './cascade-codec.ts';
import { CASCADE_EVENT_VERSION, MAX_CASCADE_MESSAGE_BYTES, type CascadeEvent, type CascadeEventData } from './cascade-event.ts';
import type { CascadeBusOptions, CascadeBusProblem, CascadeBusStats, CascadeEventHandler } from './cascade-bus.port.ts';

export class CascadeBusCore {
  readonly #opts: CascadeBusOptions;
  readonly #handlers = new Set<CascadeEventHandler>();
  #published = 0;
  #dropped = 0;
  #received = 0;
  #malformed = 0;
  #handlerErrors = 0;

  constructor(opts: CascadeBusOptions) {
    this.#opts = opts;
  }

  envelope(data: CascadeEventData): CascadeEvent {
    const now = (this.#opts.clock ?? systemClock).now();
    return { v: CASCADE_EVENT_VERSION, id: randomUUID(), origin: this.#opts.instanceId, at: now, ...data };
  }

  /** The wire text, or null (and the drop reported) when the event is too large to send. */
  encode(event: CascadeEvent, tooLarge: () => unknown): string | null {
    const text = encodeCascadeEvent(event);
    if (Buffer.byteLength(text, 'utf8') > MAX_CASCADE_MESSAGE_BYTES) {
      this.dropped(event, tooLarge());
      return null;
    }
    return text;
  }

  sent(): void {
    this.#published++;
  }

  dropped(event: CascadeEvent, error: unknown): void {
    this.#dropped++;
    this.report({ kind: 'publish-failed', event, error });
  }

  subscribe(handler: CascadeEventHandler): () => void {
    // a wrapper per call, so subscribing the same function twice gives two independent subscriptions
    const entry: CascadeEventHandler = (e) => handler(e);
    this.#handlers.add(entry);
    return () => {
      this.#handlers.delete(entry);
    };
  }

  /** One message off the transport: decode, then every handler, each isolated. */
  deliver(message: string): void {
    const decoded = decodeCascadeEvent(message);
    if (!decoded.ok) {
      this.#malformed++;
      this.report({ kind: 'malformed', reason: decoded.reason, detail: decoded.detail, bytes: Buffer.byteLength(message, 'utf8') });
      return;
    }
    this.#received++;
    for (const handler of [...this.#handlers]) {
      try {
        const r = handler(decoded.event);
        if (r instanceof Promise) r.catch((error: unknown) => this.#handlerFailed(decoded.event, error));
      } catch (error) {
        this.#handlerFailed(decoded.event, error);
      }
    }
  }

  clearHandlers(): void {
    this.#handlers.clear();
  }

  report(problem: CascadeBusProblem): void {
    try {
      this.#opts.onProblem?.(problem);
    } catch {
      // a broken reporter must not turn a dropped event into a thrown one (CASC-4)
    }
  }

  stats(): CascadeBusStats {
    return {
      published: this.#published,
      dropped: this.#dropped,
      received: this.#received,
      malformed: this.#malformed,
      handlerErrors: this.#handlerErrors,
    };
  }

  #handlerFailed(event: CascadeEvent, error: unknown): void {
    this.#handlerErrors++;
    this.report({ kind: 'handler-failed', event, error });
  }
}
