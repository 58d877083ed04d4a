// A tiny upstream GB28181 platform for the cascade end-to-end tests, built on @vms/sip in the test
// process: answers REGISTER (no challenge: the platform record carries no password) and Keepalive
// MESSAGEs with 200, and records every request with the address it came from, so a test can tell
// which signaling instance sent it (each instance sends from its own SIP port).
import { createSipStack, type SipRequest, type SipStack } from '@vms/sip';

export interface UpstreamRequest {
  readonly method: string;
  /** Local clock (Date.now()) at receipt. */
  readonly at: number;
  readonly fromPort: number;
  readonly request: SipRequest;
  readonly body: string;
}

export interface TestUpstream {
  readonly stack: SipStack;
  readonly port: number;
  readonly received: UpstreamRequest[];
  /** REGISTERs received from the instance whose SIP port is `sipPort`. */
  registersFrom(sipPort: number): UpstreamRequest[];
  close(): Promise<void>;
}

export async function startTestUpstream(): Promise<TestUpstream> {
  const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'], userAgent: 'test-upstream' });
  const received: UpstreamRequest[] = [];
  const record = (req: SipRequest, fromPort: number): void => {
    received.push({ method: req.method, at: Date.now(), fromPort, request: req, body: req.body.toString('utf8') });
  };
  stack.onRequest('REGISTER', (req, ctx) => {
    record(req, ctx.flow.remotePort);
    const expires = req.headers.get('Expires') ?? '3600';
    ctx.reply(200, { headers: { Expires: expires, Contact: req.headers.get('Contact') ?? '' } });
  });
  stack.onRequest('MESSAGE', (req, ctx) => {
    record(req, ctx.flow.remotePort);
    ctx.reply(200);
  });
  return {
    stack,
    port: stack.port,
    received,
    registersFrom: (sipPort) => received.filter((r) => r.method === 'REGISTER' && r.fromPort === sipPort),
    close: () => stack.close(),
  };
}
