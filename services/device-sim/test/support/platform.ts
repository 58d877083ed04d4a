// A tiny GB/T 28181 platform on @vms/sip for the simulator's tests: a registrar with digest, a MANSCDP
// sink that keeps everything devices send, queries answered across several MESSAGEs collected by SN,
// and INVITEs to a device's registered flow.
import { randomBytes } from 'node:crypto';
import { getCSeq, createSipStack, DigestServer, parseDigestCredentials, type Dialog, type Flow, type SipRequest, type SipStack } from '@vms/sip';
import { getItems, getText, parseManscdp, type ManscdpMessage } from '@vms/gb28181';
import { waitFor } from '@vms/harness';

export const SERVER_ID = '34020000002000000001';
export const DOMAIN = '3402000000';
export const PASSWORD = '12345678';

export interface SeenRegister {
  req: SipRequest;
  flow: Flow;
  deviceId: string;
  expires: number;
  /** The digest was verified (a 200 was sent). */
  accepted: boolean;
  username?: string;
}

export interface SeenMessage {
  req: SipRequest;
  flow: Flow;
  msg: ManscdpMessage;
}

export interface PlatformOptions {
  qop?: boolean;
  /** Answer keepalives with this status (default 200); `null` = do not answer at all. */
  keepaliveStatus?: number | null;
}

export class TestPlatform {
  readonly registers: SeenRegister[] = [];
  readonly messages: SeenMessage[] = [];
  readonly subscriptionNotifies: Array<{ req: SipRequest; msg: ManscdpMessage | undefined }> = [];
  keepaliveStatus: number | null;
  #flows = new Map<string, Flow>();
  #pending = new Map<string, { accept: (m: SeenMessage) => boolean; resolve: (all: SeenMessage[]) => void; got: SeenMessage[] }>();
  #sn = 1000;

  private constructor(
    readonly stack: SipStack,
    private readonly digest: DigestServer,
    opts: PlatformOptions,
  ) {
    this.keepaliveStatus = opts.keepaliveStatus === undefined ? 200 : opts.keepaliveStatus;
    stack.onRequest('REGISTER', (req, ctx) => this.#register(req, ctx.flow, (s, h) => ctx.reply(s, h === undefined ? {} : { headers: h })));
    stack.onRequest('MESSAGE', (req, ctx) => {
      const msg = parseManscdp(req.body);
      const seen = { req, flow: ctx.flow, msg };
      this.messages.push(seen);
      if (msg.cmdType === 'Keepalive') {
        if (this.keepaliveStatus !== null) ctx.reply(this.keepaliveStatus);
        return; // unanswered: the device's transaction times out
      }
      ctx.reply(200);
      this.#settle(seen);
    });
  }

  static async start(opts: PlatformOptions = {}): Promise<TestPlatform> {
    const stack = await createSipStack({ host: '127.0.0.1', port: 0, timers: { T1: 50, T2: 400, T4: 500 } });
    return new TestPlatform(stack, new DigestServer({ realm: DOMAIN, secret: randomBytes(16), qop: opts.qop ?? false }), opts);
  }

  get port(): number {
    return this.stack.port;
  }

  flowOf(deviceId: string): Flow {
    const flow = this.#flows.get(deviceId);
    if (flow === undefined) throw new Error(`device ${deviceId} not registered`);
    return flow;
  }

  /** MANSCDP messages from devices of a CmdType. */
  messagesOf(cmdType: string): SeenMessage[] {
    return this.messages.filter((m) => m.msg.cmdType === cmdType);
  }

  nextSn(): number {
    return ++this.#sn;
  }

  /**
   * Sends a MANSCDP Query/Control to a device over its registered flow and collects the Response
   * MESSAGEs with the same SN until `complete` says so (default: paged until SumNum items arrived).
   */
  async query(
    deviceId: string,
    body: (sn: number) => Buffer,
    opts: { targetId?: string; complete?: (got: SeenMessage[]) => boolean; timeoutMs?: number } = {},
  ): Promise<{ status: number; responses: SeenMessage[] }> {
    const sn = this.nextSn();
    const complete = opts.complete ?? pagedComplete;
    const key = String(sn);
    const responses = new Promise<SeenMessage[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(key);
        reject(new Error(`no complete answer for SN ${sn}`));
      }, opts.timeoutMs ?? 5000);
      const entry = {
        got: [] as SeenMessage[],
        accept: (m: SeenMessage) => {
          entry.got.push(m);
          return complete(entry.got);
        },
        resolve: (all: SeenMessage[]) => {
          clearTimeout(timer);
          resolve(all);
        },
      };
      this.#pending.set(key, entry);
    });
    const res = await this.sendMessage(deviceId, body(sn), opts.targetId);
    if (res >= 300) {
      this.#pending.delete(key);
      responses.catch(() => undefined);
      return { status: res, responses: [] };
    }
    return { status: res, responses: await responses };
  }

  /** A MESSAGE to the device (Request-URI = targetId, default the device); resolves with the status. */
  async sendMessage(deviceId: string, body: Buffer, targetId = deviceId): Promise<number> {
    const res = await this.stack.request({
      method: 'MESSAGE',
      uri: `sip:${targetId}@${DOMAIN}`,
      headers: { From: `<sip:${SERVER_ID}@${DOMAIN}>`, To: `<sip:${targetId}@${DOMAIN}>` },
      body,
      contentType: 'Application/MANSCDP+xml',
      target: this.flowOf(deviceId),
    });
    return res.status;
  }

  /** INVITE for `channelId` of `deviceId` with `sdp`; resolves with the dialog and the answer. */
  async invite(deviceId: string, channelId: string, sdp: string): Promise<{ dialog: Dialog; answer: string; callId: string }> {
    const { dialog, response } = await this.stack.createUAC({
      uri: `sip:${channelId}@${DOMAIN}`,
      headers: { From: `<sip:${SERVER_ID}@${DOMAIN}>`, To: `<sip:${channelId}@${DOMAIN}>`, Subject: `${channelId}:0,${SERVER_ID}:0` },
      body: sdp,
      contentType: 'APPLICATION/SDP',
      target: this.flowOf(deviceId),
    });
    return { dialog, answer: response.body.toString('latin1'), callId: dialog.callId };
  }

  /** SUBSCRIBE; NOTIFYs land in `subscriptionNotifies`. */
  async subscribe(deviceId: string, event: string, body: Buffer, expires = 60): Promise<{ dialog: Dialog; status: number; body: Buffer }> {
    const { dialog, response } = await this.stack.createUAC({
      method: 'SUBSCRIBE',
      uri: `sip:${deviceId}@${DOMAIN}`,
      headers: { From: `<sip:${SERVER_ID}@${DOMAIN}>`, To: `<sip:${deviceId}@${DOMAIN}>`, Event: event, Expires: expires },
      body,
      contentType: 'Application/MANSCDP+xml',
      target: this.flowOf(deviceId),
    });
    dialog.on('notify', (req, ctx) => {
      ctx.reply(200);
      this.subscriptionNotifies.push({ req, msg: req.body.length === 0 ? undefined : parseManscdp(req.body) });
    });
    return { dialog, status: response.status, body: response.body };
  }

  waitFor<T>(fn: () => T, description: string, timeoutMs = 5000): Promise<Exclude<T, false | null | undefined>> {
    return waitFor(fn, { timeoutMs, description });
  }

  close(): Promise<void> {
    return this.stack.close();
  }

  #register(req: SipRequest, flow: Flow, reply: (status: number, headers?: Record<string, string>) => void): void {
    const deviceId = /sip:(\d+)@/.exec(req.headers.get('From') ?? '')?.[1] ?? '';
    const expires = Number(req.headers.get('Expires') ?? '3600');
    const auth = req.headers.get('Authorization');
    const verdict = auth === undefined ? undefined : this.digest.verify(auth, { method: 'REGISTER', password: PASSWORD, now: Date.now(), requestUri: req.rawUri });
    const seen: SeenRegister = { req, flow, deviceId, expires, accepted: verdict?.ok === true };
    if (auth !== undefined) seen.username = parseDigestCredentials(auth).username;
    this.registers.push(seen);
    if (verdict?.ok !== true) {
      reply(401, { 'WWW-Authenticate': this.digest.challengeHeader(Date.now()) });
      return;
    }
    if (expires === 0) this.#flows.delete(deviceId);
    else this.#flows.set(deviceId, flow);
    reply(200, { Expires: String(expires), Date: new Date().toISOString().slice(0, 23) });
  }

  #settle(seen: SeenMessage): void {
    const entry = this.#pending.get(seen.msg.sn);
    if (entry === undefined || seen.msg.root !== 'Response') return;
    if (entry.accept(seen)) {
      this.#pending.delete(seen.msg.sn);
      entry.resolve(entry.got);
    }
  }
}

/** Complete when as many items as SumNum arrived (Catalog DeviceList / RecordInfo RecordList). */
export function pagedComplete(got: readonly SeenMessage[]): boolean {
  const first = got[0];
  if (first === undefined) return false;
  const sumText = getText(first.msg.fields, 'SumNum');
  if (sumText === undefined) return true;
  const sum = Number(sumText);
  const items = got.reduce((n, m) => n + getItems(m.msg.fields, 'DeviceList').length + getItems(m.msg.fields, 'RecordList').length, 0);
  return items >= sum;
}

/** CSeq numbers of REGISTERs, for refresh checks. */
export function cseqOf(req: SipRequest): number {
  return getCSeq(req).seq;
}
