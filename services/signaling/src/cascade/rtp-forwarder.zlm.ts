// RtpForwarder on the media plane's ZLM clients (SPEC CASC-6): the media node that holds a channel's
// live stream re-sends it to the upstream with ZLM's startSendRtp (the upstream's y= as SSRC, UDP or
// TCP active) and stops with stopSendRtp. The stream must exist on the node first: ZLM refuses
// startSendRtp for a stream it has not registered, so `waitForStream` polls getMediaList.
import { CascadeError } from '@vms/cascade';
import { isMediaError, type MediaNode, type ZlmClient } from '@vms/media';
import type { Clock } from '../core/clock.ts';
import type { MediaPlane } from '../media/media-plane.ts';
import type { StreamObservation, StreamProbe } from './live-view-watch.ts';
import type { RtpForwarder } from './upstream-live.port.ts';

/** How often a stream not yet registered on the node is looked for again, ms. */
export const STREAM_POLL_MS = 100;
/** ZLM registers GB28181 RTP under app `rtp`. */
const RTP_APP = 'rtp';

export interface ZlmRtpForwarderDeps {
  readonly plane: Pick<MediaPlane, 'node' | 'client' | 'callResult'>;
  readonly clock: Clock;
}

const mediaFailure = (what: string, err?: unknown): CascadeError =>
  new CascadeError('CASCADE_ERR_MEDIA', `${what}${err === undefined ? '' : `: ${isMediaError(err) ? err.code : 'error'}`}`, { cause: err });

/**
 * The live views' stream check (live-view-watch.ts): getMediaList of the stream on its node; a node that
 * left the media node table or does not answer rejects (counted as unreachable).
 */
export function createZlmStreamProbe(d: Pick<ZlmRtpForwarderDeps, 'plane'>): StreamProbe {
  return async (nodeId, streamId): Promise<StreamObservation> => {
    const node = d.plane.node(nodeId);
    if (node === undefined) throw mediaFailure(`unknown media node ${nodeId}`);
    let found;
    try {
      found = await d.plane.client(node).getMediaList({ app: RTP_APP, stream: streamId });
      d.plane.callResult(nodeId, null);
    } catch (err) {
      d.plane.callResult(nodeId, err);
      throw mediaFailure(`getMediaList on ${nodeId}`, err);
    }
    if (found.length === 0) return { kind: 'absent' };
    const alive = found.map((m) => m.aliveSecond).filter((a): a is number => a !== undefined);
    return { kind: 'present', aliveSecond: alive.length === 0 ? undefined : Math.max(...alive) };
  };
}

export function createZlmRtpForwarder(d: ZlmRtpForwarderDeps): RtpForwarder & { readonly probe: StreamProbe } {
  const nodeOf = (nodeId: string): { node: MediaNode; client: ZlmClient } => {
    const node = d.plane.node(nodeId);
    if (node === undefined) throw mediaFailure(`unknown media node ${nodeId}`);
    return { node, client: d.plane.client(node) };
  };
  const call = async <T>(nodeId: string, what: string, work: () => Promise<T>): Promise<T> => {
    try {
      const r = await work();
      d.plane.callResult(nodeId, null);
      return r;
    } catch (err) {
      d.plane.callResult(nodeId, err);
      throw mediaFailure(`${what} on ${nodeId}`, err);
    }
  };
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => d.clock.setTimeout(resolve, ms));

  return {
    probe: createZlmStreamProbe(d),
    async waitForStream(nodeId, streamId, timeoutMs, signal) {
      const { client } = nodeOf(nodeId);
      const deadline = d.clock.now() + timeoutMs;
      for (;;) {
        const found = await call(nodeId, 'getMediaList', () => client.getMediaList({ app: RTP_APP, stream: streamId }));
        if (found.length > 0) return;
        if (signal.aborted) throw new CascadeError('CASCADE_ERR_SOURCE_TIMEOUT', 'live view abandoned while waiting for the stream');
        if (d.clock.now() >= deadline) throw new CascadeError('CASCADE_ERR_SOURCE_TIMEOUT', `stream ${streamId} did not reach media node ${nodeId} within ${timeoutMs} ms`);
        await sleep(STREAM_POLL_MS);
      }
    },
    async start(nodeId, req) {
      const { node, client } = nodeOf(nodeId);
      const { localPort } = await call(nodeId, 'startSendRtp', () =>
        client.startSendRtp({ stream: req.streamId, ssrc: req.ssrc, dstUrl: req.dstAddress, dstPort: req.dstPort, isUdp: req.udp, pt: req.payloadType }),
      );
      return { address: node.sdpIp, port: localPort };
    },
    async stop(nodeId, streamId, ssrc) {
      const { client } = nodeOf(nodeId);
      await call(nodeId, 'stopSendRtp', () => client.stopSendRtp({ stream: streamId, ssrc }));
    },
  };
}
