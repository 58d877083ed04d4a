// The set-up shared by the audio recovery e2e tests (talk, broadcast; GB/T 28181-2016 §9.12, SPEC §11): real
// redis-server and mariadbd, signaling instances with DEFAULT timings, the ZLM stand-in with its hooks to one of
// them, the operators' microphones as RTP streams on the media node (G.711A every 20 ms), and simulated devices
// (services/device-sim) that are closed with the rest.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_SECRET } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

/** Default node heartbeat 5 s × 3 (SPEC NODE-1): the online window. */
export const ONLINE_WINDOW_MS = 15_000;

/**
 * The rebooted `device` got the operator's audio through exactly one Notify/INVITE, and exactly one recovery
 * was logged, by `by` and not by `other`; resolves with that log line and the device's call.
 */
export async function assertOneAudioRecovery(
  device: SimulatedDevice,
  by: Instance,
  other: Instance,
): Promise<{ readonly logged: Record<string, unknown>; readonly call: SimulatedDevice['audioCalls'][number] }> {
  const call = device.audioCalls[0];
  assert.ok(call !== undefined);
  await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'the operator’s audio at the rebooted device' });
  assert.equal(device.audioCalls.length, 1, 'one Notify/INVITE for the recovery');
  await eventually(() => logLines(by, 'orphaned audio session recovered').length === 1, 'the new owner logged the recovery');
  assert.equal(logLines(other, 'orphaned audio session recovered').length, 0);
  return { logged: logLines(by, 'orphaned audio session recovered')[0] ?? {}, call };
}

export interface AudioCluster {
  readonly stores: Stores;
  readonly zlm: ZlmStandIn;
  /** The instance of that node code (one of those asked for). */
  node(code: string): Instance;
  /** A simulated device on `instance` (not started); `talks` offers sendrecv (对讲) instead of recvonly. */
  device(instance: Instance, deviceId: string, talks: boolean): SimulatedDevice;
  /** Starts `ds`, waits for their REGISTER on `instance`, syncs their one channel through it. */
  register(instance: Instance, ds: readonly SimulatedDevice[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the stores, the stand-in (hooks to `hooksTo`; RTP timeout 30 s, outlasting the online window so the
 * streams are there to recover), the instances named `codes`, and one microphone per entry of `mics`; returns
 * once every instance is online and the microphones are registered on the media node.
 */
export async function startAudioCluster(o: { readonly codes: readonly string[]; readonly hooksTo: string; readonly mics: readonly string[] }): Promise<AudioCluster> {
  const stores = await startStores();
  const nodes = new Map<string, Instance>();
  const devices: SimulatedDevice[] = [];
  const mic = createSocket('udp4');
  let feeding: NodeJS.Timeout | undefined;
  let zlm: ZlmStandIn | undefined;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    clearInterval(feeding);
    mic.close();
    await Promise.all(devices.map((d) => d.close()));
    await Promise.all([...nodes.values()].map((x) => x.proc.stop()));
    await zlm?.close();
    await stores.stop();
  };
  try {
    const hookPort = await freePort();
    const node = await startStandIn(hookPort, { rtpTimeoutMs: 30_000 });
    zlm = node;
    const media = { VMS_MEDIA_NODES: mediaNodesEnv(node), LOG_LEVEL: 'debug' };
    for (const code of o.codes) {
      const env = code === o.hooksTo ? { ...media, SERVER_PORT: String(hookPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${hookPort}` } : media;
      nodes.set(code, await startInstance(stores, code, { env }));
    }
    const ports: number[] = [];
    for (const m of o.mics) {
      const open = (await (await fetch(`${node.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${m}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
      assert.equal(open.code, 0);
      ports.push(open.port);
    }
    let seq = 0;
    // one SSRC per microphone: ZLM keys its senders by SSRC
    feeding = setInterval(() => {
      seq = (seq + 1) & 0xffff;
      for (const port of ports) mic.send(buildRtpPacket({ ssrc: 0x4321 + port, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), port, '127.0.0.1');
    }, 20);
    const first = nodes.get(o.codes[0] ?? '');
    assert.ok(first !== undefined, 'at least one instance');
    await waitForOnline(first, o.codes, 30_000);
    await waitFor(() => o.mics.every((m) => node.stats(m)?.registered ?? false), { timeoutMs: 5000, description: 'the microphone streams on the media node' });
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return {
    stores,
    zlm,
    node(code) {
      const n = nodes.get(code);
      assert.ok(n !== undefined, `no instance ${code}`);
      return n;
    },
    device(instance, deviceId, talks) {
      const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: 'unused', channels: 1, keyFrameBytes: 2000, deltaFrameBytes: 400 });
      d.talks = talks;
      devices.push(d);
      return d;
    },
    async register(instance, ds) {
      await Promise.all(ds.map((d) => d.start()));
      await waitFor(() => ds.every((d) => d.registered), { timeoutMs: 10_000, description: `devices registered on ${instance.code}` });
      const apiOf = { api: async (m: string, p: string) => (await api(instance, p, { method: m })).json as never };
      for (const d of ds) await syncChannels(apiOf, d.deviceId, 1);
    },
    close,
  };
}
