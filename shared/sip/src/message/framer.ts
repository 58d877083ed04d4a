import { SipParseError } from '../errors.ts';
import { scanContentLength } from './content-length.ts';
import { findStart, plausibleStart, recountBody } from './miscounted-length.ts';

const CR = 13;
const LF = 10;
const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
const LFLF = Buffer.from('\n\n', 'latin1');

/**
 * Default ceiling for one framed message (SPEC SEC-3): the UDP datagram ceiling, so a message is
 * refused alike on both transports. GB28181 devices page large Catalog/RecordInfo answers (SumNum),
 * each MESSAGE a few KB; a peer sending more is refused (513, RFC 3261 §21.5.14) and cut off.
 */
export const DEFAULT_MAX_STREAM_MESSAGE_BYTES = 65_535;

/**
 * RFC 5626 §3.5.1 keepalives between messages: a double CRLF is a "ping" (answer with one CRLF),
 * a single CRLF is the "pong". A ping split across two segments is reported as two pongs.
 */
export type StreamKeepalive = 'ping' | 'pong';

export interface SipStreamFramerOptions {
  maxMessageBytes?: number;
  onKeepalive?: (kind: StreamKeepalive) => void;
}

/**
 * Cuts a TCP byte stream into SIP messages (RFC 3261 §18.3): the header section ends at the first
 * empty line and the body is exactly Content-Length bytes — which is therefore mandatory on streams.
 * Returned buffers start at the start line and are meant for `parseSipMessage`.
 *
 * A framing error (no/bad Content-Length, message over `maxMessageBytes`) leaves no way to find the
 * next message boundary: the framer stays failed, every later `push` rethrows, and the transport
 * should close the connection.
 *
 * One exception to "exactly Content-Length bytes": devices that count the body in characters
 * (miscounted-length.ts). When the bytes after a message cannot start another one, a character
 * count that ends the XML on a sane boundary is taken as the body (`recounted`; the frame is then
 * longer than its Content-Length, and parse.ts keeps it whole); when none does, the message goes up
 * as declared and the stray tail is skipped to the next start line (`discardedBytes`).
 */
/** Bytes kept while looking for the next start line after a stray tail (one split across segments). */
const START_LINE_PREFIX = 24;
/**
 * Reads of a miscounted message waiting for its tail: a tail split across segments arrives in the
 * next one or two; more means a peer trickling bytes, and each re-read walks the whole body.
 */
const MAX_RECOUNT_WAITS = 4;

export class SipStreamFramer {
  readonly #max: number;
  readonly #onKeepalive: ((kind: StreamKeepalive) => void) | undefined;
  // Unconsumed bytes are #store[#start, #end). Appends go after #end; when there is no room a new,
  // larger store is allocated (never compacted in place: returned frames are views of old bytes),
  // so a peer trickling one byte per segment costs amortized O(1) per byte, not a full copy.
  #store: Buffer = Buffer.alloc(0);
  #start = 0;
  #end = 0;
  /** Total size of the message at #start once its headers are complete, else -1. */
  #need = -1;
  /** Bytes after #start already searched for the end of the header section. */
  #scanned = 0;
  /** Offset from #start of the first LF, -1 until seen: it tells CRLF peers from LF-only ones. */
  #firstLf = -1;
  /** Of the message at #start once measured: where its body starts and its declared length. */
  #bodyStart = 0;
  #declared = 0;
  /** The last message was followed by bytes that cannot start one: skip to the next start line. */
  #resync = false;
  /** Re-reads of the message at #start that ended waiting for more bytes. */
  #recountWaits = 0;
  #failed: SipParseError | undefined;
  /** Messages whose body was re-measured from a character count. */
  recounted = 0;
  /** Stray bytes skipped between messages. */
  discardedBytes = 0;

  constructor(opts: SipStreamFramerOptions = {}) {
    this.#max = opts.maxMessageBytes ?? DEFAULT_MAX_STREAM_MESSAGE_BYTES;
    this.#onKeepalive = opts.onKeepalive;
  }

  /** Bytes held while waiting for the rest of a message. */
  get bufferedBytes(): number {
    return this.#end - this.#start;
  }

  /** The bytes held (after a failure: the start of the message refused), for an error answer. */
  get pending(): Buffer {
    return this.#store.subarray(this.#start, this.#end);
  }

  push(chunk: Buffer): Buffer[] {
    if (this.#failed !== undefined) throw this.#failed;
    this.#append(chunk);
    try {
      return this.#drain();
    } catch (err) {
      if (err instanceof SipParseError) this.#failed = err;
      throw err;
    }
  }

  #append(chunk: Buffer): void {
    if (this.#start === this.#end) {
      // Nothing pending: frame straight out of the segment (zero copy). Its length bounds any write.
      this.#store = chunk;
      this.#start = 0;
      this.#end = chunk.length;
      return;
    }
    if (this.#store.length - this.#end < chunk.length) {
      const pending = this.#end - this.#start;
      const grown = Buffer.allocUnsafe(Math.max(2 * pending, pending + chunk.length, 4096));
      this.#store.copy(grown, 0, this.#start, this.#end);
      this.#store = grown;
      this.#start = 0;
      this.#end = pending;
    }
    chunk.copy(this.#store, this.#end);
    this.#end += chunk.length;
  }

  #drain(): Buffer[] {
    const out: Buffer[] = [];
    while (this.#end > this.#start) {
      if (this.#need === -1) {
        // a stray tail (after a miscounted message, maybe in a later segment) is skipped, not framed
        if ((this.#resync || !plausibleStart(this.#store, this.#start, this.#end)) && !this.#skipStray()) break;
        if (!this.#skipKeepalives()) break;
        const need = this.#measure();
        if (need === -1) break;
        this.#need = need;
      }
      if (this.#end - this.#start < this.#need) break;
      if (!plausibleStart(this.#store, this.#start + this.#need, this.#end) && !this.#recount()) break;
      out.push(this.#store.subarray(this.#start, this.#start + this.#need));
      this.#start += this.#need;
      this.#need = -1;
      this.#scanned = 0;
      this.#firstLf = -1;
    }
    return out;
  }

  /**
   * The bytes after the message at #start cannot begin a message: take a character-counted body
   * length when one fits, else mark the tail for skipping. False: wait for more bytes.
   */
  #recount(): boolean {
    const r = recountBody(this.#store, this.#start + this.#bodyStart, this.#end, this.#declared);
    if (r.kind === 'wait' && this.#end - this.#start < this.#max && this.#recountWaits < MAX_RECOUNT_WAITS) {
      this.#recountWaits++;
      return false;
    }
    if (r.kind === 'fits' && this.#bodyStart + r.bodyBytes <= this.#max) {
      this.#need = this.#bodyStart + r.bodyBytes;
      this.recounted++;
    } else {
      this.#resync = true;
    }
    return true;
  }

  /** Skips a stray tail up to the next start line; false when none is buffered yet. */
  #skipStray(): boolean {
    const b = this.#store;
    const at = plausibleStart(b, this.#start, this.#end) ? this.#start : findStart(b, this.#start, this.#end);
    if (at === -1) {
      const keep = Math.min(this.#end - this.#start, START_LINE_PREFIX);
      this.discardedBytes += this.#end - this.#start - keep;
      this.#start = this.#end - keep;
      return false;
    }
    this.discardedBytes += at - this.#start;
    this.#start = at;
    this.#resync = false;
    return true;
  }

  /** Drops CR/LF bytes before a start line, reporting them; false when nothing else is buffered. */
  #skipKeepalives(): boolean {
    const b = this.#store;
    let i = this.#start;
    while (i < this.#end && (b[i] === CR || b[i] === LF)) i++;
    if (i === this.#start) return true;
    const skipped = i - this.#start;
    this.#start = i;
    this.#scanned = 0;
    this.#firstLf = -1;
    this.#onKeepalive?.(skipped >= 4 ? 'ping' : 'pong');
    return this.#end > this.#start;
  }

  /** Total size of the message at #start, or -1 while its header section is incomplete. */
  #measure(): number {
    const b = this.#store.subarray(this.#start, this.#end);
    // Only bytes not searched before are searched again (minus a separator's overlap).
    if (this.#firstLf === -1) this.#firstLf = b.indexOf(LF, this.#scanned);
    if (this.#firstLf !== -1) {
      const crlf = this.#firstLf > 0 && b[this.#firstLf - 1] === CR;
      const sep = crlf ? CRLFCRLF : LFLF;
      const at = b.indexOf(sep, Math.max(0, this.#scanned - sep.length));
      if (at !== -1) {
        const bodyStart = at + sep.length;
        const contentLength = scanContentLength(b.toString('latin1', 0, at));
        if (contentLength === null) {
          throw new SipParseError('SIP_ERR_CONTENT_LENGTH', 'Content-Length is mandatory on stream transports (RFC 3261 §18.3)', {
            header: 'Content-Length',
          });
        }
        const total = bodyStart + contentLength;
        if (total > this.#max) throw tooLarge(total, this.#max);
        this.#bodyStart = bodyStart;
        this.#declared = contentLength;
        this.#recountWaits = 0;
        return total;
      }
    }
    if (b.length > this.#max) throw tooLarge(b.length, this.#max);
    this.#scanned = b.length;
    return -1;
  }
}

function tooLarge(size: number, max: number): SipParseError {
  return new SipParseError('SIP_ERR_MESSAGE_TOO_LARGE', `stream message of ${size} bytes exceeds the ${max}-byte limit`);
}
