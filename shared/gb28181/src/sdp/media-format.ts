/**
 * The f= line of the GB/T 28181 SDP extensions (Annex F of the 2016 text, Annex G in 2022):
 *   f=v/<codec>/<resolution>/<frame rate>/<rate type>/<bit rate>a/<codec>/<bit rate>/<sample rate>
 * Every field may be empty (`f=v/2/4///a///` = H.264, D1, nothing else stated). Video codec:
 * 1 MPEG-4, 2 H.264, 3 SVAC, 4 3GP (2022: 5 H.265). Resolution: 1 QCIF, 2 CIF, 3 4CIF, 4 D1,
 * 5 720P, 6 1080P/I. Rate type: 1 CBR, 2 VBR. Audio codec: 1 G.711, 2 G.723.1, 3 G.729, 4 G.722.1.
 */
import { GbSdpError } from '../errors.ts';

export interface MediaFormat {
  video: { codec: string; resolution: string; frameRate: string; rateType: string; bitRate: string };
  audio: { codec: string; bitRate: string; sampleRate: string };
}

const F_RE = /^v\/([^/]*)\/([^/]*)\/([^/]*)\/([^/]*)\/([^/a]*)a\/([^/]*)\/([^/]*)\/([^/]*)$/;

/** undefined for an empty `f=`; GB_ERR_SDP when the value does not follow that syntax. */
export function parseMediaFormat(f: string): MediaFormat | undefined {
  if (f.trim() === '') return undefined;
  const m = F_RE.exec(f.trim());
  if (m === null) throw new GbSdpError('malformed f= line');
  const [codec, resolution, frameRate, rateType, bitRate, aCodec, aBitRate, sampleRate] = m.slice(1) as string[] as [
    string, string, string, string, string, string, string, string,
  ];
  return { video: { codec, resolution, frameRate, rateType, bitRate }, audio: { codec: aCodec, bitRate: aBitRate, sampleRate } };
}

export function formatMediaFormat(f: MediaFormat): string {
  const v = f.video;
  const a = f.audio;
  return `v/${v.codec}/${v.resolution}/${v.frameRate}/${v.rateType}/${v.bitRate}a/${a.codec}/${a.bitRate}/${a.sampleRate}`;
}
