// Probers of routing destinations (SPEC §10 health; the dispatcher's OPTIONS keepalive): SIP OPTIONS for
// 'sip' destinations through this instance's SIP stack, HTTP GET for 'http' destinations with undici.
// Each resolves true (alive) or false within its timeout and never throws; the judgement is pure
// (optionsAlive, httpAlive) so it is tested without sockets.
import { request } from 'undici';
import { SipStatus, type SipStack } from '@vms/sip';
import type { Destination, Prober } from '@vms/routing';

/** Longest response body read from an HTTP probe (it is discarded). */
const MAX_PROBE_BODY = 64 * 1024;

/**
 * Any final answer shows the peer's SIP layer is up (RFC 3261 §11: OPTIONS may be refused by policy, e.g. 403
 * or 405, and the server is still there); a 408 (it relayed and timed out), 5xx (server error, overloaded:
 * §21.5.4) and 6xx do not, nor does no answer at all.
 */
export function optionsAlive(status: number): boolean {
  return status >= 200 && status < 500 && status !== SipStatus.RequestTimeout;
}

/** 2xx and 3xx (a redirect to a login or a status page is still a live server); 4xx / 5xx are not. */
export function httpAlive(status: number): boolean {
  return status >= 200 && status < 400;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * OPTIONS to the destination's address (`sip:host:port`). A transaction outliving the probe's timeout
 * ends on its own at Timer F (RFC 3261 §17.1.2.2); its late answer is dropped.
 */
export function sipOptionsProber(stack: Pick<SipStack, 'request'>): Prober {
  return async (d: Destination, timeoutMs: number) => {
    const sent = stack.request({ method: 'OPTIONS', uri: d.address, headers: { Accept: 'application/sdp' } });
    const res = await withTimeout(
      sent.catch(() => undefined),
      timeoutMs,
    );
    return res !== undefined && optionsAlive(res.status);
  };
}

/** GET of the destination's address (an http:// or https:// URL). */
export function httpGetProber(): Prober {
  return async (d: Destination, timeoutMs: number) => {
    let url: URL;
    try {
      url = new URL(d.address);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    try {
      const res = await request(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      await res.body.dump({ limit: MAX_PROBE_BODY }).catch(() => undefined);
      return httpAlive(res.statusCode);
    } catch {
      return false;
    }
  };
}
