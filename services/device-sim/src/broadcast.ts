// Voice broadcast on the device side (GB/T 28181-2016 §9.12): the platform's Notify/Broadcast names
// an audio source (SourceID) and this device's audio output (TargetID); the device answers Result OK
// and INVITEs the source for audio — `m=audio` on a UDP port it listens on, `a=recvonly`, G.711A
// (PT 8) — and counts the RTP that arrives there until either side sends BYE.
import { createSocket, type Socket } from 'node:dgram';
import { buildResultResponse, buildSdp, makeSsrc, RESULT_OK, type BroadcastNotify } from '@vms/gb28181';
import type { Dialog, SipLogger, SipStack } from '@vms/sip';
import type { ResolvedDeviceOptions } from './options.ts';
import type { PlatformLink } from './platform-link.ts';
import { SDP_CONTENT_TYPE } from './protocol.ts';

/** G.711 A-law, RFC 3551 static payload type 8. */
export const PT_PCMA = 8;

export class AudioCall {
  packets = 0;
  readonly ssrcs = new Set<number>();
  readonly payloadTypes = new Set<number>();
  ended = false;

  constructor(
    readonly sourceId: string,
    readonly targetId: string,
    readonly port: number,
    readonly dialog: Dialog,
    private readonly socket: Socket,
  ) {
    socket.on('message', (b) => {
      if (b.length < 12 || b[0] === undefined || b[0] >> 6 !== 2) return; // RFC 3550 §5.1: version 2
      this.packets++;
      this.ssrcs.add(b.readUInt32BE(8));
      this.payloadTypes.add((b[1] ?? 0) & 0x7f);
    });
    dialog.once('terminated', () => this.#end());
  }

  #end(): void {
    if (this.ended) return;
    this.ended = true;
    this.socket.close();
  }

  /** BYE from the device. */
  async hangUp(): Promise<void> {
    await this.dialog.destroy().catch(() => undefined);
    this.#end();
  }
}

export interface BroadcastDeps {
  o: ResolvedDeviceOptions;
  stack: SipStack;
  link: PlatformLink;
  log: SipLogger;
  sequence: () => number;
}

export async function answerBroadcast(deps: BroadcastDeps, n: BroadcastNotify): Promise<AudioCall> {
  const { o, link } = deps;
  await link.sendManscdp(buildResultResponse('Broadcast', { sn: n.sn, deviceId: n.targetId, result: RESULT_OK }, { charset: o.charset }));
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, o.localHost, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  socket.on('error', (err) => deps.log.debug({ err }, 'audio socket error'));
  const port = socket.address().port;
  const ssrc = makeSsrc({ history: false, domain: o.server.domain, sequence: deps.sequence() });
  const sdp = buildSdp({
    version: '0',
    origin: { username: n.targetId, sessionId: '0', sessionVersion: '0', netType: 'IN', addrType: 'IP4', address: o.localHost },
    sessionName: 'Play',
    connection: { netType: 'IN', addrType: 'IP4', address: o.localHost },
    timing: { start: '0', stop: '0' },
    attributes: [],
    media: [{ type: 'audio', port, protocol: 'RTP/AVP', formats: [String(PT_PCMA)], attributes: [{ name: 'rtpmap', value: `${PT_PCMA} PCMA/8000` }, { name: 'recvonly' }] }],
    ssrc,
    format: 'v/////a/1/8/1',
  });
  try {
    const r = await deps.stack.createUAC({
      uri: `sip:${n.sourceId}@${o.server.host}:${o.server.port}`,
      headers: { From: link.address(n.targetId), To: link.address(n.sourceId), Subject: `${n.sourceId}:${ssrc},${n.targetId}:0` },
      body: Buffer.from(sdp),
      contentType: SDP_CONTENT_TYPE,
      target: link.target,
    });
    return new AudioCall(n.sourceId, n.targetId, port, r.dialog, socket);
  } catch (err) {
    socket.close();
    throw err;
  }
}
