// Chaos: resource exhaustion from the network (issue #10, SPEC SEC-3: every queue, buffer, connection and
// wait has a bound, with default settings). One instance as `npm run signaling` starts it (embedded
// stores, a device password); the attacker is on the same host.
//   - catalog flood: one registered device sends many ~64 KB Catalog responses over TCP as fast as the
//     socket takes them: /healthz keeps answering within its bound and the device's channel count stays
//     under the cap;
//   - TCP slow-header hold: hundreds of SIP/TCP connections trickle a header that never ends: each is
//     closed by the message completion deadline (or refused by the per-address cap), RSS growth bounded;
//   - HTTP slow-body hold: hundreds of connections trickle a body to /vms/webhook/*: each is closed by the
//     HTTP request timeout (or refused by the connection cap).
import { connect, type Socket } from 'node:net';
import { after, describe } from 'node:test';
import { sleep, waitFor } from '@vms/harness';
import { PASSWORD, SERVER_ID, startInstance, type DeviceView, type Instance } from '../integration/signaling-fixture.ts';
import { watchHealth } from './load.ts';
import { catalogBody, deviceMessage, registerOverTcp, tcpPeer } from './raw-sip.ts';
import { chaosBefore, chaosScenario, rssMb, type ScenarioRun } from './scenario.ts';

/**
 * /healthz must answer within this throughout every attack, ms. Unloaded it answers in a few ms; the
 * bound leaves room for a CI machine whose two cores are shared with other jobs (1.2 s seen with no
 * attack at all under a load average of 20), not for an event loop blocked by the attack.
 */
const HEALTH_BOUND_MS = 2000;
/** Channels one device may have (issue #10 channel cap, default max channels per device). */
const CHANNEL_CAP = 50_000;
/** Channels the flood offers, in Catalog responses just under the 64 KB SIP/TCP message limit (~210 items each). */
const FLOOD_CHANNELS = CHANNEL_CAP + 10_000;
const FLOOD_MESSAGE_BYTES = 63 * 1024;
/** Connections each hold opens. */
const HOLD_CONNECTIONS = 300;
/** One byte per connection every this, ms: never idle long enough for an idle timer. */
const TRICKLE_MS = 1000;
/** A SIP/TCP message must be complete this long after its first byte (SPEC SEC-3 default), ms. */
const SIP_MESSAGE_DEADLINE_MS = 10_000;
/** An HTTP request (headers and body) must be complete within this (issue #10, the HTTP request timeout default), ms. */
const HTTP_REQUEST_TIMEOUT_MS = 30_000;
/** Declared body of each slow request: under the 64 KB webhook body limit, so only the timeout can end it. */
const SLOW_BODY_BYTES = 10_000;
/** Slack on top of a deadline for timers and a loaded machine, ms. */
const CLOSE_SLACK_MS = 5000;
/** RSS may grow at most this much while a hold lasts, MB. */
const RSS_GROWTH_MB = 64;
const FLOOD_DEVICE = '34020000001320000401';
/** The sync the flood answers is over (complete, partial or failed) within this after the flood, ms. */
const SYNC_SETTLE_MS = 20_000;

let instance: Instance;
let httpPort: number;

chaosBefore(async () => {
  instance = await startInstance();
  httpPort = Number(new URL(instance.httpUrl).port);
});

after(async () => {
  await instance?.stop();
});

const tracked = (run: ScenarioRun): void => run.track([{ name: 'sig', pid: () => instance.proc.pid }]);

/** Adds the health watch's answers to the row. */
function healthOf(run: ScenarioRun, r: { within: number; late: number; slowestMs: number }): void {
  run.within += r.within;
  run.late += r.late;
  run.note(`/healthz: ${r.within} answers, slowest ${r.slowestMs.toFixed(0)} ms`);
  run.check(r.late === 0, `/healthz: ${r.late} answers past ${HEALTH_BOUND_MS} ms (slowest ${r.slowestMs.toFixed(0)} ms)`);
}

interface Hold {
  readonly sockets: Socket[];
  /** ms from the start of the hold to the server closing each connection (undefined: still open). */
  readonly closedAfter: (number | undefined)[];
  stop(): void;
}

/** Opens `count` connections to `port`, writes `head` on each, then one byte of `trickle` every TRICKLE_MS. */
async function hold(port: number, count: number, head: string, trickle: string): Promise<Hold> {
  const t0 = performance.now();
  const sockets: Socket[] = [];
  const closedAfter: (number | undefined)[] = [];
  for (let i = 0; i < count; i++) {
    const s = connect(port, '127.0.0.1');
    const k = i;
    closedAfter.push(undefined);
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    s.on('close', () => {
      closedAfter[k] ??= performance.now() - t0;
    });
    s.once('connect', () => s.write(head));
    sockets.push(s);
    if (i % 50 === 49) await sleep(10); // do not fill the accept backlog
  }
  let n = 0;
  const timer = setInterval(() => {
    const byte = trickle[n++ % trickle.length] as string;
    for (const s of sockets) if (!s.destroyed && s.writable) s.write(byte);
  }, TRICKLE_MS);
  return {
    sockets,
    closedAfter,
    stop() {
      clearInterval(timer);
      for (const s of sockets) s.destroy();
    },
  };
}

/** Runs a hold until every connection is closed or `boundMs` passed; fills the row. */
async function holdScenario(run: ScenarioRun, port: number, head: string, trickle: string, boundMs: number): Promise<void> {
  tracked(run);
  const rss0 = rssMb(instance.proc.pid) ?? 0;
  let peak = rss0;
  const health = watchHealth(`${instance.httpUrl}/healthz`, HEALTH_BOUND_MS);
  const h = await hold(port, HOLD_CONNECTIONS, head, trickle);
  const t0 = performance.now();
  while (performance.now() - t0 < boundMs && h.closedAfter.some((c) => c === undefined)) {
    peak = Math.max(peak, rssMb(instance.proc.pid) ?? 0);
    await sleep(250);
  }
  const open = h.closedAfter.filter((c) => c === undefined).length;
  const closed = h.closedAfter.filter((c): c is number => c !== undefined);
  const immediate = closed.filter((c) => c < 1000).length;
  h.stop();
  run.within += closed.length;
  run.late += open;
  run.check(open === 0, `${open} of ${HOLD_CONNECTIONS} connections still open after ${boundMs} ms`);
  run.note(`${closed.length} connections closed by the server (${immediate} within 1 s), last after ${(Math.max(0, ...closed) / 1000).toFixed(1)} s`);
  run.check(peak - rss0 <= RSS_GROWTH_MB, `RSS grew ${(peak - rss0).toFixed(0)} MB during the hold (bound ${RSS_GROWTH_MB})`);
  run.note(`RSS peak +${(peak - rss0).toFixed(0)} MB`);
  healthOf(run, await health.stop());
}

describe('chaos: resource exhaustion from the network', () => {
  chaosScenario('catalog flood (64 KB MESSAGEs from one device)', { boundMs: HEALTH_BOUND_MS, timeoutMs: 90_000 }, async (run) => {
    tracked(run);
    const peer = await tcpPeer(instance.sipPort);
    try {
      await registerOverTcp(peer, { deviceId: FLOOD_DEVICE, serverId: SERVER_ID, password: PASSWORD });
      // a catalog sync in progress, so the responses are what the platform is waiting for
      const sync = await instance.api('POST', `/vms/device/catalog/sync?deviceId=${FLOOD_DEVICE}`);
      run.check(sync.success, `catalog sync answered ${sync.code} ${sync.msg}`);
      await sleep(300);
      const query = peer.requests.map((r) => /<SN>(\d+)<\/SN>/.exec(r.body.toString('latin1'))?.[1]).find((sn) => sn !== undefined);
      const sn = Number(query ?? 1);
      const itemBytes = catalogBody(FLOOD_DEVICE, sn, 0, 0, 2).length - catalogBody(FLOOD_DEVICE, sn, 0, 0, 1).length;
      const perMessage = Math.floor((FLOOD_MESSAGE_BYTES - 1200) / itemBytes);
      const messages = Math.ceil(FLOOD_CHANNELS / perMessage);
      const health = watchHealth(`${instance.httpUrl}/healthz`, HEALTH_BOUND_MS);
      const t0 = performance.now();
      let sent = 0;
      for (let m = 0; m < messages && !peer.closed; m++) {
        const body = catalogBody(FLOOD_DEVICE, sn, messages * perMessage, m * perMessage, perMessage);
        const bytes = deviceMessage({ deviceId: FLOOD_DEVICE, serverId: SERVER_ID, sentBy: `127.0.0.1:${peer.localPort}`, transport: 'TCP', cseq: 10 + m, body });
        if (!peer.socket.write(bytes)) await new Promise((r) => peer.socket.once('drain', r));
        sent += bytes.length;
      }
      run.note(`flood: ${messages} × ${(sent / messages / 1024).toFixed(1)} KB (${messages * perMessage} channels offered) written in ${(performance.now() - t0).toFixed(0)} ms${peer.closed ? ', connection closed by the server' : ''}`);
      // the platform reads what is left, then the sync ends one way or another
      const settled = await waitFor(
        async () => {
          const p = await instance.api<{ state: string; received: number; total: number | null; partial: boolean }>('GET', `/vms/device/catalog/sync?deviceId=${FLOOD_DEVICE}`);
          return p.success && p.data.state !== 'running' ? p.data : null;
        },
        { timeoutMs: SYNC_SETTLE_MS, intervalMs: 250, description: 'catalog sync settled' },
      ).catch(() => null);
      run.note(`sync ${settled === null ? 'still running' : `${settled.state}${settled.partial ? ' (partial)' : ''}, ${settled.received}/${settled.total ?? '?'} items`}`);
      healthOf(run, await health.stop());
      const view = await instance.api<DeviceView>('GET', `/vms/devices/${FLOOD_DEVICE}`);
      const channels = view.success ? view.data.channelCount : -1;
      run.note(`channels stored: ${channels}`);
      run.check(channels >= 0 && channels <= CHANNEL_CAP, `device has ${channels} channels (cap ${CHANNEL_CAP})`);
    } finally {
      peer.socket.destroy();
    }
  });

  chaosScenario('TCP slow-header hold (SIP)', { boundMs: SIP_MESSAGE_DEADLINE_MS + CLOSE_SLACK_MS, timeoutMs: 90_000 }, async (run) => {
    const head = `MESSAGE sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)} SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5060;branch=z9hG4bKslow\r\nX-Slow: `;
    await holdScenario(run, instance.sipPort, head, 'abcdefgh', SIP_MESSAGE_DEADLINE_MS + CLOSE_SLACK_MS);
  });

  chaosScenario('HTTP slow-body hold (/vms/webhook/*)', { boundMs: HTTP_REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS, timeoutMs: 120_000 }, async (run) => {
    const head = `POST /vms/webhook/on_stream_changed?secret=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${SLOW_BODY_BYTES}\r\n\r\n{"a":"`;
    await holdScenario(run, httpPort, head, 'abcdefgh', HTTP_REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS);
  });
});
