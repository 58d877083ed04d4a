// Hand-built messages and a recording environment for transaction state-machine tests: no parser,
// no sockets, time from a FakeClock.
import { FakeClock } from '../../src/clock.ts';
import { SipHeaders } from '../../src/message/headers.ts';
import type { SipMessage, SipRequest, SipResponse } from '../../src/message/types.ts';
import type { TransactionEnv } from '../../src/transaction/base.ts';
import { resolveTimers, timerValues, type TimerConfig } from '../../src/transaction/timers.ts';

export function makeRequest(method: string, branch = 'z9hG4bKtest1', cseq = 1): SipRequest {
  const h = new SipHeaders()
    .append('Via', `SIP/2.0/UDP 127.0.0.1:5060;rport;branch=${branch}`)
    .append('Max-Forwards', '70')
    .append('From', '<sip:34020000002000000001@3402000000>;tag=from1')
    .append('To', '<sip:34020000001320000001@3402000000>')
    .append('Call-ID', 'call-1@127.0.0.1')
    .append('CSeq', `${cseq} ${method}`)
    .append('Route', '<sip:10.0.0.1;lr>')
    .append('Content-Length', '0');
  return {
    type: 'request',
    method,
    uri: { scheme: 'sip', user: '34020000001320000001', password: null, host: '127.0.0.1', port: 5061, params: new Map(), headers: new Map() },
    rawUri: 'sip:34020000001320000001@127.0.0.1:5061',
    headers: h,
    body: Buffer.alloc(0),
  };
}

export function makeResponse(req: SipRequest, status: number, toTag = 'to1'): SipResponse {
  const h = new SipHeaders();
  for (const v of req.headers.getLines('Via')) h.append('Via', v);
  h.append('From', req.headers.get('From') ?? '');
  h.append('To', `${req.headers.get('To') ?? ''}${status > 100 ? `;tag=${toTag}` : ''}`);
  h.append('Call-ID', req.headers.get('Call-ID') ?? '');
  h.append('CSeq', req.headers.get('CSeq') ?? '');
  h.append('Content-Length', '0');
  return { type: 'response', status, reason: `R${status}`, headers: h, body: Buffer.alloc(0) };
}

export interface Sent {
  at: number;
  msg: SipMessage;
}

export function recordingEnv(opts: { reliable?: boolean; timers?: Partial<TimerConfig> } = {}): {
  clock: FakeClock;
  env: TransactionEnv;
  sent: Sent[];
} {
  const clock = new FakeClock();
  const sent: Sent[] = [];
  const reliable = opts.reliable ?? false;
  const env: TransactionEnv = {
    clock,
    reliable,
    timers: timerValues(resolveTimers(opts.timers), reliable),
    send: (msg) => sent.push({ at: clock.now(), msg }),
  };
  return { clock, env, sent };
}

export function recordingTu(): {
  events: string[];
  responses: SipResponse[];
  tu: {
    onResponse(res: SipResponse): void;
    onTimeout(): void;
    onTransportError(err: Error): void;
    onTerminated(): void;
  };
} {
  const events: string[] = [];
  const responses: SipResponse[] = [];
  return {
    events,
    responses,
    tu: {
      onResponse: (res) => {
        responses.push(res);
        events.push(`response:${res.status}`);
      },
      onTimeout: () => events.push('timeout'),
      onTransportError: (err) => events.push(`transport-error:${err.message}`),
      onTerminated: () => events.push('terminated'),
    },
  };
}

export const times = (sent: Sent[]): number[] => sent.map((s) => s.at);
export const describeSent = (s: Sent): string =>
  s.msg.type === 'request' ? s.msg.method : String(s.msg.status);
