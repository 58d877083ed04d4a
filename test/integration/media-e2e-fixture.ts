// What the media end-to-end tests share: a ZLM stand-in (test/stand-ins, NOT ZLMediaKit) whose hooks
// go to a signaling instance seeded with that node through VMS_MEDIA_NODES, simulated GB28181 devices
// (services/device-sim) sending real RTP/PS, and helpers for the media API.
import diagnosticsChannel from 'node:diagnostics_channel';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { SIP_CHANNELS, type MessageInEvent, type SipRequest } from '@vms/sip';
import { freePort, waitFor } from '@vms/harness';
import { startZlmStandIn, type ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { PASSWORD, SERVER_ID, startInstance, type Envelope, type Instance } from './signaling-fixture.ts';

export const ZLM_SECRET = 'zlm-standin-secret-1';
export const ZLM_ID = 'zlm-standin-1';

export interface StartAnswer {
  sessionId: string;
  streamId: string;
  urls: Record<string, string>;
  mediaNodeId: string;
  ssrc: string;
  streamMode: string;
  viewers: number;
  ready: boolean;
}

/** The VMS_MEDIA_NODES value for one stand-in. */
export function mediaNodesEnv(zlm: ZlmStandIn): string {
  return JSON.stringify([{ id: zlm.mediaServerId, apiBaseUrl: zlm.apiBaseUrl, secret: ZLM_SECRET, sdpIp: '127.0.0.1', httpPort: zlm.httpPort }]);
}

/** A stand-in whose hooks go to `http://127.0.0.1:<hookPort>/vms/webhook?secret=…`. */
export function startStandIn(hookPort: number, opts: { rtpTimeoutMs?: number; id?: string } = {}): Promise<ZlmStandIn> {
  return startZlmStandIn({
    secret: ZLM_SECRET,
    mediaServerId: opts.id ?? ZLM_ID,
    hookBaseUrl: `http://127.0.0.1:${hookPort}/vms/webhook?secret=${ZLM_SECRET}`,
    keepaliveIntervalMs: 1000,
    rtpTimeoutMs: opts.rtpTimeoutMs ?? 15_000,
  });
}

export interface SingleStack {
  readonly zlm: ZlmStandIn;
  readonly instance: Instance;
  stop(): Promise<void>;
}

/** One instance (zero config but ports, a device password and the media node) and its stand-in. */
export async function startSingleStack(extraEnv: Record<string, string> = {}): Promise<SingleStack> {
  const httpPort = await freePort();
  const zlm = await startStandIn(httpPort);
  const instance = await startInstance({ SERVER_PORT: String(httpPort), VMS_MEDIA_NODES: mediaNodesEnv(zlm), LOG_LEVEL: 'debug', ...extraEnv });
  return {
    zlm,
    instance,
    async stop() {
      await instance.stop();
      await zlm.close();
    },
  };
}

/** A simulated IPC/NVR registered on the instance, with its channels synced into the platform. */
export async function startSimDevice(
  instance: Pick<Instance, 'api' | 'sipPort'>,
  deviceId: string,
  o: { channels?: number; playbackMaxMs?: number; fps?: number } = {},
): Promise<SimulatedDevice> {
  const device = createSimulatedDevice({
    server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID },
    deviceId,
    password: PASSWORD,
    channels: o.channels ?? 1,
    fps: o.fps ?? 25,
    keyFrameBytes: 2000,
    deltaFrameBytes: 400,
    utcOffsetMinutes: 480,
    ...(o.playbackMaxMs === undefined ? {} : { playbackMaxMs: o.playbackMaxMs }),
  });
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
  await syncChannels(instance, deviceId, device.channelIds.length);
  return device;
}

export async function syncChannels(instance: Pick<Instance, 'api'>, deviceId: string, count: number): Promise<void> {
  const sync = await instance.api('POST', `/vms/device/catalog/sync?deviceId=${deviceId}`);
  if (!sync.success) throw new Error(`catalog sync refused: ${JSON.stringify(sync)}`);
  await waitFor(
    async () => {
      const r = await instance.api<{ total?: number; records?: unknown[] } | unknown[]>('GET', `/vms/channels?deviceId=${deviceId}&size=1000`);
      const d = r.data as { total?: number; records?: unknown[] } | unknown[];
      const n = Array.isArray(d) ? d.length : (d.total ?? d.records?.length ?? 0);
      return r.success && n >= count;
    },
    { timeoutMs: 30_000, intervalMs: 100, description: `${count} channels of ${deviceId} stored` },
  );
}

/** POST/GET on the media API; fails the test on a non-success envelope unless `allowFailure`. */
export async function call<T>(instance: Pick<Instance, 'api'>, method: 'GET' | 'POST', path: string, allowFailure = false): Promise<Envelope<T>> {
  const r = await instance.api<T>(method, path);
  if (!allowFailure && !r.success) throw new Error(`${method} ${path}: ${JSON.stringify(r)}`);
  return r;
}

/** Every SIP request received in this process (the simulated devices), as the stacks parsed it. */
export function recordSipRequests(method: string): { readonly requests: SipRequest[]; stop(): void } {
  const requests: SipRequest[] = [];
  const onMessage = (m: unknown): void => {
    const e = m as MessageInEvent;
    if (e.message.type === 'request' && e.message.method === method) requests.push(e.message);
  };
  diagnosticsChannel.subscribe(SIP_CHANNELS.messageIn, onMessage);
  return { requests, stop: () => diagnosticsChannel.unsubscribe(SIP_CHANNELS.messageIn, onMessage) };
}
