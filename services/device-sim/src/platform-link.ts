// How the device addresses its platform: the server URI and target, the From/To it writes, and
// MANSCDP MESSAGEs towards it (responses to queries, keepalives, notifications).
import { MISDECLARED_CONTENT_LENGTH, type HostTarget, type SipResponse, type SipStack } from '@vms/sip';
import type { ResolvedDeviceOptions } from './options.ts';
import { MANSCDP_CONTENT_TYPE } from './protocol.ts';

export interface SendManscdpOptions {
  /** The id the message speaks for (a channel for MediaStatus); default the device id. */
  fromId?: string;
  /** Reuse a Call-ID (MediaStatus carries the INVITE's, as platforms match it that way). */
  callId?: string;
}

export class PlatformLink {
  /** Where requests go: the configured server, or the shard a 302 named (GB/T 28181-2022 §9.1.2.3). */
  target: HostTarget;
  readonly serverUri: string;
  readonly #home: HostTarget;

  constructor(
    private readonly stack: SipStack,
    private readonly o: ResolvedDeviceOptions,
    /** Quirk `countsCharacters` of the device (device.ts), read at each send. */
    private readonly countsCharacters: () => boolean = () => false,
  ) {
    this.#home = { host: o.server.host, port: o.server.port, transport: o.transport };
    this.target = this.#home;
    this.serverUri = `sip:${o.server.id}@${o.server.domain}`;
  }

  /** Requests now go where a 302 sent us. */
  redirect(host: string, port: number): void {
    this.target = { host, port, transport: this.o.transport };
  }

  /** Back to the configured server (the redirect server): after a 403 at the shard. */
  home(): void {
    this.target = this.#home;
  }

  get redirected(): boolean {
    return this.target !== this.#home;
  }

  /** `<sip:id@domain>`: how GB/T 28181 devices write From and To (§9.1.2.1 examples). */
  address(id: string): string {
    return `<sip:${id}@${this.o.server.domain}>`;
  }

  sendManscdp(body: Buffer, opts: SendManscdpOptions = {}): Promise<SipResponse> {
    if (this.o.declaredCharset !== this.o.charset) body = relabelDeclaration(body, this.o.declaredCharset);
    if (this.countsCharacters()) body = withCharacterCount(body, this.o.charset);
    const headers: Record<string, string> = { From: this.address(opts.fromId ?? this.o.deviceId), To: this.address(this.o.server.id) };
    if (opts.callId !== undefined) headers['Call-ID'] = opts.callId;
    return this.stack.request({
      method: 'MESSAGE',
      uri: this.serverUri,
      headers,
      body,
      contentType: MANSCDP_CONTENT_TYPE,
      target: this.target,
    });
  }
}

/**
 * The body with its XML declaration naming `declared` instead of the charset its bytes are in (the
 * declaration is ASCII in every charset the device speaks, so it is rewritten byte for byte).
 */
export function relabelDeclaration(body: Buffer, declared: string): Buffer {
  const head = body.subarray(0, Math.min(body.length, 100)).toString('latin1');
  const m = /^(<\?xml[^>]*?encoding\s*=\s*["'])([^"']*)(["'])/.exec(head);
  if (m === null) return body;
  return Buffer.concat([Buffer.from(m[1] + declared + m[3], 'latin1'), body.subarray(m[0].length)]);
}

/** A copy of `body` announced with its length in characters (decoded in `charset`) instead of bytes. */
export function withCharacterCount(body: Buffer, charset: string): Buffer {
  const text = new TextDecoder(charset.toUpperCase() === 'GB2312' ? 'gb18030' : 'utf-8').decode(body);
  const copy = Buffer.from(body);
  (copy as unknown as Record<symbol, number>)[MISDECLARED_CONTENT_LENGTH] = [...text].length;
  return copy;
}
