// Live-view set-up benchmark (SPEC §8 media, §9): one signaling instance (child process, embedded
// store), the ZLM stand-in (in this process; really binds one RTP port per stream and counts packets —
// NOT ZLMediaKit) and simulated NVRs from services/device-sim (in this process) that answer INVITE
// and really send RTP/PS over UDP (1 fps, small frames, to keep thousands of streams cheap).
// Run from the repository root: npx tsx test/bench/invite.ts [--sessions 2000] [--nvrs 4] [--quick]
//   (quick: 200 sessions, 2 NVRs, 20 sequential and 50 concurrent plays, ~1 min)
//
// Figures: POST /vms/play/start round trip (choose node, openRtpServer, INVITE → 200 → ACK, session
// index) p50 / p99 for plays one at a time and C at a time; then a ramp holding live sessions open up
// to the target (≥ 2,000 per instance), with the instance's RSS, failures, and RTP checked on a
// sample of streams; then every session stopped (BYE + closeRtpServer). Bounded: whole run < 3 min.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { Pool } from 'undici';
import { isQuick, printSummary } from './summary.ts';
import { mediaNodesEnv, startStandIn, syncChannels } from '../integration/media-e2e-fixture.ts';
import { operatorToken, PASSWORD, SERVER_ID, startInstance } from '../integration/signaling-fixture.ts';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string' },
    nvrs: { type: 'string' },
    sequential: { type: 'string' },
    concurrent: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    quick: { type: 'boolean', default: false },
  },
});
const QUICK = args.quick === true || isQuick();
const TARGET = Number(args.sessions ?? (QUICK ? '200' : '2000'));
const NVRS = Number(args.nvrs ?? (QUICK ? '2' : '4'));
const SEQUENTIAL = Number(args.sequential ?? (QUICK ? '20' : '100'));
const CONCURRENT = Number(args.concurrent ?? (QUICK ? '50' : '400'));
/** The target of a full run; quick mode holds fewer. */
const TARGET_SESSIONS = 2000;
const CONCURRENCY = Number(args.concurrency);
const DEADLINE_MS = 170_000;
const started = performance.now();
const left = (): number => DEADLINE_MS - (performance.now() - started);

interface Play {
  sessionId: string;
  streamId: string;
}

const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.floor(q * s.length))] as number);
};
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;
const rssMb = (pid: number | undefined): number => {
  if (pid === undefined) return NaN;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]) / 1024;
};

async function main(): Promise<void> {
  const httpPort = await freePort();
  const zlm = await startStandIn(httpPort, { rtpTimeoutMs: 60_000 });
  const instance = await startInstance({ SERVER_PORT: String(httpPort), VMS_MEDIA_NODES: mediaNodesEnv(zlm), LOG_LEVEL: 'info' }); // the fixture waits for the info start-up line
  const perNvr = Math.ceil((TARGET + SEQUENTIAL + CONCURRENT) / NVRS);
  const nvrs: SimulatedDevice[] = [];
  const pool = new Pool(instance.httpUrl, { connections: CONCURRENCY * 2 });
  const auth = `bearer ${operatorToken()}`;
  const failures = new Map<string, number>();
  const fail = (why: string): void => {
    failures.set(why, (failures.get(why) ?? 0) + 1);
  };
  try {
    for (let i = 0; i < NVRS; i++) {
      const deviceId = `3402000000118${String(i + 1).padStart(7, '0')}`;
      const nvr = createSimulatedDevice({
        server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID },
        deviceId,
        password: PASSWORD,
        channels: perNvr,
        catalogPageSize: 50,
        fps: 1,
        gopFrames: 1,
        keyFrameBytes: 300,
        deltaFrameBytes: 100,
      });
      await nvr.start();
      await waitFor(() => nvr.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
      await syncChannels(instance, deviceId, perNvr);
      nvrs.push(nvr);
    }
    const channels = nvrs.flatMap((n) => n.channelIds);
    let cursor = 0;
    const nextChannel = (): string => channels[cursor++] as string;

    const play = async (channelId: string, lat?: number[]): Promise<Play | null> => {
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: 'POST', path: `/vms/play/start?channelId=${channelId}`, headers: { 'blade-auth': auth } });
        const body = (await res.body.json()) as { success: boolean; msg: string; data: Play };
        lat?.push(performance.now() - t0);
        if (!body.success) {
          fail(body.msg.replace(/\d{20}/g, '<id>'));
          return null;
        }
        return body.data;
      } catch (err) {
        fail(String(err));
        return null;
      }
    };
    const stop = async (p: Play, lat?: number[]): Promise<void> => {
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path: `/vms/play/stop?sessionId=${p.sessionId}`, headers: { 'blade-auth': auth } });
      const body = (await res.body.json()) as { success: boolean; msg: string };
      lat?.push(performance.now() - t0);
      if (!body.success) fail(`stop: ${body.msg}`);
    };
    const inParallel = async <T>(items: readonly T[], c: number, fn: (x: T) => Promise<void>): Promise<void> => {
      let i = 0;
      await Promise.all(Array.from({ length: Math.min(c, items.length) }, async () => {
        while (i < items.length && left() > 5000) await fn(items[i++] as T);
      }));
    };

    console.log(`machine: ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${NVRS} simulated NVRs x ${perNvr} channels`);
    console.log(`instance RSS at start: ${rssMb(instance.proc.pid).toFixed(0)} MB`);

    // 1. one at a time
    const seqLat: number[] = [];
    const seq: Play[] = [];
    for (let i = 0; i < SEQUENTIAL && left() > 60_000; i++) {
      const p = await play(nextChannel(), seqLat);
      if (p !== null) seq.push(p);
    }
    const seqStop: number[] = [];
    for (const p of seq) await stop(p, seqStop);
    console.log(`sequential plays: n=${seqLat.length} p50 ${fmt(quantile(seqLat, 0.5))} p99 ${fmt(quantile(seqLat, 0.99))}; stop p50 ${fmt(quantile(seqStop, 0.5))} p99 ${fmt(quantile(seqStop, 0.99))}`);

    // 2. C at a time
    const conLat: number[] = [];
    const con: Play[] = [];
    const conChannels = Array.from({ length: CONCURRENT }, nextChannel);
    const t1 = performance.now();
    await inParallel(conChannels, CONCURRENCY, async (c) => {
      const p = await play(c, conLat);
      if (p !== null) con.push(p);
    });
    const conWall = performance.now() - t1;
    await inParallel(con, CONCURRENCY, (p) => stop(p));
    console.log(
      `concurrent plays (${CONCURRENCY} in flight): n=${conLat.length} p50 ${fmt(quantile(conLat, 0.5))} p99 ${fmt(quantile(conLat, 0.99))}, ${((conLat.length * 1000) / conWall).toFixed(0)} plays/s`,
    );

    // 3. ramp and hold
    const held: Play[] = [];
    const rampChannels = Array.from({ length: Math.min(TARGET, channels.length - cursor) }, nextChannel);
    const rampLat: number[] = [];
    const t2 = performance.now();
    let lastReport = t2;
    await inParallel(rampChannels, CONCURRENCY, async (c) => {
      const p = await play(c, rampLat);
      if (p !== null) held.push(p);
      if (performance.now() - lastReport > 5000) {
        lastReport = performance.now();
        console.log(`  ramp: ${held.length} sessions held, RSS ${rssMb(instance.proc.pid).toFixed(0)} MB`);
      }
    });
    const rampWall = performance.now() - t2;
    // RTP check on a sample: every 50th stream must have received packets
    const sample = held.filter((_, i) => i % 50 === 0);
    await waitFor(() => sample.every((p) => (zlm.stats(p.streamId)?.rtpPackets ?? 0) > 0), { timeoutMs: 10_000, description: 'RTP on sampled streams' }).catch(() => undefined);
    const withRtp = sample.filter((p) => (zlm.stats(p.streamId)?.rtpPackets ?? 0) > 0).length;
    const heldRss = rssMb(instance.proc.pid);
    const devStreams = nvrs.reduce((n, d) => n + d.activeSessions.length, 0);
    console.log(
      `ramp: ${held.length}/${rampChannels.length} live sessions held (target ${TARGET}) in ${(rampWall / 1000).toFixed(1)} s; ` +
        `play p50 ${fmt(quantile(rampLat, 0.5))} p99 ${fmt(quantile(rampLat, 0.99))}; device-side sessions ${devStreams}; ` +
        `RTP on ${withRtp}/${sample.length} sampled streams; instance RSS ${rssMb(instance.proc.pid).toFixed(0)} MB`,
    );
    const stopLat: number[] = [];
    const t3 = performance.now();
    await inParallel(held, CONCURRENCY, (p) => stop(p, stopLat));
    await waitFor(() => nvrs.every((d) => d.activeSessions.length === 0), { timeoutMs: 15_000, description: 'all device sessions closed' }).catch(() => undefined);
    console.log(
      `stop all: ${stopLat.length} in ${((performance.now() - t3) / 1000).toFixed(1)} s, p50 ${fmt(quantile(stopLat, 0.5))} p99 ${fmt(quantile(stopLat, 0.99))}; ` +
        `device sessions left ${nvrs.reduce((n, d) => n + d.activeSessions.length, 0)}; RSS ${rssMb(instance.proc.pid).toFixed(0)} MB`,
    );
    console.log(`failures: ${failures.size === 0 ? 'none' : JSON.stringify(Object.fromEntries(failures))}`);
    const failed = [...failures.values()].reduce((a, b) => a + b, 0);
    printSummary({
      bench: 'invite',
      what: 'live sessions on one instance (device-sim + ZLM stand-in)',
      figures:
        `${held.length} of ${TARGET} held, play p50 ${fmt(quantile(seqLat, 0.5))} sequential / ${fmt(quantile(rampLat, 0.5))} ramp, ` +
        `RSS ${heldRss.toFixed(0)} MB, RTP on ${withRtp}/${sample.length} sampled, ${failed} failures`,
      // quick mode holds fewer sessions: its target is all of them, the full run's is 2,000
      target: QUICK ? `all ${TARGET} held (full run: ≥ ${TARGET_SESSIONS.toLocaleString('en-US')})` : `≥ ${TARGET_SESSIONS.toLocaleString('en-US')} held`,
      met: held.length >= (QUICK ? TARGET : TARGET_SESSIONS) && failed === 0,
    });
    console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await pool.close();
    await Promise.all(nvrs.map((n) => n.close()));
    await instance.stop();
    await zlm.close();
  }
}

await main();
