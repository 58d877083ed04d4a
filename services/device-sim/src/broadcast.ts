// Voice broadcast on the device side (GB/T 28181-2016 §9.12): the platform's Notify/Broadcast names
// an audio source (SourceID) and this device's audio output (TargetID); the device answers Result OK
// and INVITEs the source for audio — `m=audio` on a UDP port it listens on, `a=recvonly`, G.711A
// (PT 8) — and counts the RTP that arrives there until either side sends BYE.
//
// A device that talks (`talks`, 语音对讲) offers `a=sendrecv` instead and, when the answer is not
// sendonly (RFC 3264 §6.1), sends its own G.711A RTP (its y= SSRC, every 20 ms) from that same port
// to the answer's address and port — symmetric RTP, what the media node's startSendRtp with
// `recv_stream_id` expects back.
import { createSocket, type Socket } from 'node:dgram';
import { buildResultResponse, buildSdp, makeSsrc, parseSdp, RESULT_OK, type BroadcastNotify } from '@vms/gb28181';
import type { Dialog, SipLogger, SipStack } from '@vms/sip';
import type { ResolvedDeviceOptions } from './options.ts';
import type { PlatformLink } from './platform-link.ts';
import { SDP_CONTENT_TYPE } from './protocol.ts';

/** G.711 A-law, RFC 3551 static payload type 8. */
export const PT_PCMA = 8;

/** G.711 at 8 kHz in 20 ms packets: 160 samples (RFC 3551 §4.5.14). */
const PACKET_MS = 20;
const SAMPLES_PER_PACKET = 160;
/** A-law code of silence. */
const ALAW_SILENCE = 0xd5;

export class AudioCall {
  packets = 0;
  /** RTP packets this device sent to the platform (talk). */
  sent = 0;
  /** Where the device sends its audio (talk), from the platform's answer; undefined when it only listens. */
  sendingTo: { host: string; port: number } | undefined;
  #sender: NodeJS.Timeout | undefined;
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

  /** Talk: G.711A RTP with `ssrc` every 20 ms from the receive socket to `to`, until the call ends. */
  talk(ssrc: number, to: { host: string; port: number }): void {
    this.sendingTo = to;
    let seq = 0;
    this.#sender = setInterval(() => {
      seq = (seq + 1) & 0xffff;
      const packet = Buffer.alloc(12 + SAMPLES_PER_PACKET, ALAW_SILENCE);
      packet[0] = 0x80; // RFC 3550 §5.1: V=2, no padding, no extension, no CSRC
      packet[1] = PT_PCMA;
      packet.writeUInt16BE(seq, 2);
      packet.writeUInt32BE((seq * SAMPLES_PER_PACKET) >>> 0, 4);
      packet.writeUInt32BE(ssrc >>> 0, 8);
      this.socket.send(packet, to.port, to.host, (err) => {
        if (err === null) this.sent++;
      });
    }, PACKET_MS);
    this.#sender.unref();
  }

  #end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.#sender);
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
  /** Offer two-way audio (`a=sendrecv`) and send audio back when the answer allows it. */
  talks: boolean;
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
    media: [{ type: 'audio', port, protocol: 'RTP/AVP', formats: [String(PT_PCMA)], attributes: [{ name: 'rtpmap', value: `${PT_PCMA} PCMA/8000` }, { name: deps.talks ? 'sendrecv' : 'recvonly' }] }],
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
    const call = new AudioCall(n.sourceId, n.targetId, port, r.dialog, socket);
    const to = deps.talks ? talkDestination(r.response.body) : undefined;
    if (to !== undefined) call.talk(Number(ssrc), to);
    return call;
  } catch (err) {
    socket.close();
    throw err;
  }
}

/** The answer's audio address and port when it lets the device send (not sendonly/inactive), else undefined. */
function talkDestination(body: Buffer): { host: string; port: number } | undefined {
  try {
    const answer = parseSdp(body);
    const audio = answer.media.find((m) => m.type === 'audio' && m.port > 0);
    const host = audio?.connection?.address ?? answer.connection?.address;
    const dirs = [...(audio?.attributes ?? []), ...answer.attributes].map((a) => a.name);
    if (audio === undefined || host === undefined || dirs.includes('sendonly') || dirs.includes('inactive')) return undefined;
    return { host, port: audio.port };
  } catch {
    return undefined;
  }
}
