// AudioSender (sip/sip-broadcast.ts) on the media plane's ZLM clients: the node re-sends the named
// audio stream to the device with startSendRtp (UDP, the device's y= as SSRC, payload type 8) and
// stops with stopSendRtp. Talk adds ZLM's `recv_stream_id`: the node receives the device's audio on
// the port it sends from (one port both ways, what devices behind NAT need) and stopSendRtp releases
// that stream too. A node that is unknown or fails answers MediaFailedError (4609).
import { isMediaError } from '@vms/media';
import { MediaFailedError } from '../errors/catalog.ts';
import type { AudioSender } from '../sip/sip-broadcast.ts';
import type { MediaPlane } from './media-plane.ts';

export function createZlmAudioSender(plane: Pick<MediaPlane, 'node' | 'client' | 'callResult'>): AudioSender {
  const call = async <T>(nodeId: string, what: string, work: (client: ReturnType<MediaPlane['client']>) => Promise<T>): Promise<{ value: T; sdpIp: string }> => {
    const node = plane.node(nodeId);
    if (node === undefined) throw new MediaFailedError(what, `unknown media node ${nodeId}`);
    try {
      const value = await work(plane.client(node));
      plane.callResult(nodeId, null);
      return { value, sdpIp: node.sdpIp };
    } catch (err) {
      plane.callResult(nodeId, err);
      throw new MediaFailedError(what, isMediaError(err) ? err.code : 'error', { cause: err });
    }
  };
  return {
    async start(source, to) {
      const r = await call(source.mediaNodeId, 'startSendRtp', (c) =>
        c.startSendRtp({
          app: source.app,
          stream: source.stream,
          ssrc: String(Number(to.ssrc)),
          dstUrl: to.host,
          dstPort: to.port,
          isUdp: true,
          pt: to.payloadType,
          ...(to.receiveStreamId === undefined ? {} : { recvStreamId: to.receiveStreamId }),
        }),
      );
      return { address: r.sdpIp, port: r.value.localPort };
    },
    async stop(source, ssrc) {
      await call(source.mediaNodeId, 'stopSendRtp', (c) => c.stopSendRtp({ app: source.app, stream: source.stream, ssrc: String(Number(ssrc)) }));
    },
  };
}
