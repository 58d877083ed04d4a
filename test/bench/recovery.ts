// Session continuity under load (SPEC §11 RECOVER): N live sessions on one instance that is killed (SIGKILL).
// Real redis-server and mariadbd, three signaling instances (default timings: online window 15 s, give-up 30 s),
// the ZLM stand-in (NOT ZLMediaKit; one real RTP port per stream) and simulated NVRs (services/device-sim, 1 fps)
// whose every channel is played through node-a with one reader each. node-a is killed; the NVRs reboot and
// register on node-b. Counted: streams with RTP again on their stream id, sessions released, and the rest;
// every session must be recovered or cleanly released (node-a's index empty, no RTP server left without RTP).
// Run from the repository root: npx tsx test/bench/recovery.ts [--sessions 200] [--nvrs 2] [--quick]
//   (quick: 40 sessions)
import { parseArgs } from 'node:util';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { isQuick, printSummary } from './summary.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_SECRET, type StartAnswer } from '../integration/media-e2e-fixture.ts';
import { api, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance } from '../integration/routing-cluster.ts';

const { values: args } = parseArgs({ options: { sessions: { type: 'string' }, nvrs: { type: 'string' }, quick: { type: 'boolean', default: false } } });
const QUICK = args.quick === true || isQuick();
const SESSIONS = Number(args.sessions ?? (QUICK ? '40' : '200'));
const NVRS = Number(args.nvrs ?? '2');
const PER_NVR = Math.ceil(SESSIONS / NVRS);
const ONLINE_WINDOW_MS = 15_000;
const GIVE_UP_MS = 30_000;

const stores = await startStores();
const bPort = await freePort();
const zlm = await startStandIn(bPort, { rtpTimeoutMs: 60_000 });
const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm), LOG_LEVEL: 'info' };
const instances: Instance[] = [];
const devices: SimulatedDevice[] = [];
const nvr = (on: Instance, i: number): SimulatedDevice => {
  const d = createSimulatedDevice({
    server: { host: '127.0.0.1', port: on.sipPort, id: SERVER_ID },
    deviceId: `340200000011800${String(i).padStart(5, '0')}`,
    password: 'unused',
    channels: PER_NVR,
    // distinct across NVRs (the derived ones would repeat, and plays of one channel share a stream)
    channelIds: Array.from({ length: PER_NVR }, (_, k) => `3402000000131${String(i).padStart(2, '0')}${String(k).padStart(5, '0')}`),
    fps: 1,
    keyFrameBytes: 600,
    deltaFrameBytes: 200,
  });
  devices.push(d);
  return d;
};

try {
  const a = await startInstance(stores, 'node-a', { env: media });
  const b = await startInstance(stores, 'node-b', { env: { ...media, SERVER_PORT: String(bPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${bPort}` } });
  const c = await startInstance(stores, 'node-c', { env: media });
  instances.push(a, b, c);
  await waitForOnline(a, ['node-a', 'node-b', 'node-c'], 30_000);

  const first = Array.from({ length: NVRS }, (_, i) => nvr(a, i));
  await Promise.all(first.map((d) => d.start()));
  await waitFor(() => first.every((d) => d.registered), { timeoutMs: 20_000, description: 'NVRs registered on node-a' });
  const apiOf = { api: async (m: string, p: string) => (await api(a, p, { method: m, timeoutMs: 30_000 })).json as never };
  for (const d of first) await syncChannels(apiOf, d.deviceId, PER_NVR);

  const channels = first.flatMap((d) => d.channelIds).slice(0, SESSIONS);
  const plays: StartAnswer[] = [];
  for (let i = 0; i < channels.length; i += 16) {
    const batch = await Promise.all(
      channels.slice(i, i + 16).map(async (ch) => {
        const r = await api(a, `/vms/play/start?channelId=${ch}`, { method: 'POST', timeoutMs: 30_000 });
        if (!r.json.success) throw new Error(`play ${ch}: ${r.bytes.toString()}`);
        return r.json.data as StartAnswer;
      }),
    );
    plays.push(...batch);
  }
  await waitFor(() => plays.every((p) => zlm.stats(p.streamId)?.registered === true), { timeoutMs: 60_000, description: 'every stream at the media node' });
  for (const p of plays) await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${encodeURIComponent(p.streamId)}&delta=1`);
  await waitFor(async () => (await stores.redisClient.scard('vms:rec:{node-a}:idx')) === plays.length, { timeoutMs: 20_000, description: 'every session journaled' }).catch(async (err: unknown) => {
    console.log('journaled', await stores.redisClient.scard('vms:rec:{node-a}:idx'), 'of', plays.length);
    console.log(a.proc.output().split('\n').filter((l) => /"level":(40|50)|stream ended/.test(l)).slice(0, 20).join('\n'));
    throw err;
  });
  console.log(`${plays.length} live sessions on node-a, each with a reader; killing node-a`);

  const killing = a.proc.kill();
  const killedAt = Date.now();
  await killing;
  await Promise.all(first.map((d) => d.close())); // the NVRs reboot: their RTP stops
  const atRestart = new Map(plays.map((p) => [p.streamId, zlm.stats(p.streamId)?.rtpPackets ?? 0]));
  const second = Array.from({ length: NVRS }, (_, i) => nvr(b, i));
  await Promise.all(second.map((d) => d.start()));
  await waitFor(() => second.every((d) => d.registered), { timeoutMs: 20_000, description: 'NVRs registered on node-b' });

  const resumed = (): number => plays.filter((p) => (zlm.stats(p.streamId)?.rtpPackets ?? 0) > (atRestart.get(p.streamId) ?? 0)).length;
  let allAt: number | null = null;
  await waitFor(
    async () => {
      if (allAt === null && resumed() === plays.length) allAt = Date.now();
      return allAt !== null || (await stores.redisClient.scard('vms:rec:{node-a}:idx')) === 0;
    },
    { timeoutMs: ONLINE_WINDOW_MS + GIVE_UP_MS + 30_000, intervalMs: 50, description: 'every session recovered or released' },
  ).catch(() => undefined);
  await waitFor(async () => (await stores.redisClient.scard('vms:rec:{node-a}:idx')) === 0, { timeoutMs: GIVE_UP_MS + 10_000, description: 'node-a index empty' }).catch(() => undefined);
  const count = (msg: string): number => logLines(b, msg).length + logLines(c, msg).length;
  // child output comes through a pipe: the last lines may trail the state
  await waitFor(() => count('orphaned session recovered') + count('orphaned session released') >= plays.length, { timeoutMs: 5000, description: 'outcome log lines' }).catch(() => undefined);
  const recovered = count('orphaned session recovered');
  const released = count('orphaned session released');
  const left = await stores.redisClient.scard('vms:rec:{node-a}:idx');
  const invites = second.reduce((n, d) => n + d.sessions.filter((s) => s.kind === 'Play').length, 0);
  const withRtp = resumed();
  const lastMs = allAt === null ? null : allAt - killedAt;
  console.log(`sessions ${plays.length}: recovered ${recovered} (RTP again on ${withRtp} stream ids, ${invites} recovery INVITEs), released ${released}, left in node-a's index ${left}`);
  console.log(`all streams with RTP again ${lastMs === null ? 'never' : `${lastMs} ms`} after the kill (online window ${ONLINE_WINDOW_MS} ms)`);
  const met = recovered + released === plays.length && left === 0 && invites === recovered;
  printSummary({
    bench: 'recovery',
    what: `${plays.length} live sessions on a killed owner`,
    figures: `recovered ${recovered}, released ${released}, left ${left}; all RTP back ${lastMs ?? '–'} ms after kill`,
    target: 'all recovered or released, one INVITE each, index empty',
    met,
  });
  if (!met) process.exitCode = 1;
} finally {
  await Promise.all(devices.map((d) => d.close()));
  await Promise.all(instances.map((x) => x.proc.stop()));
  await zlm.close();
  await stores.stop();
}
