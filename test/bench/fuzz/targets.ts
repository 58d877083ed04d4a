// Every inbound parser of the platform as a fuzz target: what it is fed (mutated captures and grammar
// output), what it must survive (its documented error class, nothing else), and an oracle where one
// exists (the keepalive scanner must agree with the full codec whenever it answers).
import { isCascadeError, upstreamPlatform, type UpstreamPlatformInput } from '@vms/cascade';
import {
  buildCatalogResponse,
  buildMansrtspSpeed,
  buildPlaybackOffer,
  decodeManscdpCommand,
  decodePtzCmd,
  describeSdp,
  isGbError,
  parseManscdp,
  parseMansrtsp,
  parseMediaFormat,
  parseSdp,
  parseSsrc,
  scanKeepalive,
} from '@vms/gb28181';
import { mutateMarkup, mutateSip, randomObject } from '@vms/harness/fuzz';
import { createHookHandler, MEDIA_HOOK_NAMES } from '@vms/media';
import {
  DigestServer,
  getCallId,
  getContacts,
  getContentType,
  getCSeq,
  getExpires,
  getFrom,
  getMaxForwards,
  getRouteSet,
  getTo,
  getVias,
  parseDigestCredentials,
  parseSipMessage,
  serializeSipMessage,
  SipParseError,
  SipStreamFramer,
} from '@vms/sip';
import { sharedChannelFromBody } from '../../../services/signaling/src/http/routes/platforms.ts';
import { buildDatagramResponse, peekReadings, stampDatagramVia, type PeekedRequest } from '../../../shared/sip/src/transport/datagram-shortcut.ts';
import { fillTemplate, loadAllSampleBodies } from '../../../shared/gb28181/test/samples.ts';
import { loadAllSamples } from '../../../shared/sip/test/message-fixtures/samples.ts';
import { HOOK_KEYS, keepaliveText, manscdpBody, mansrtspText, PLATFORM_KEYS, sdpText, sipMessage } from './grammar.ts';

type Rnd = () => number;

export interface FuzzTarget {
  readonly name: string;
  /** Share of the total inputs this target gets. */
  readonly weight: number;
  /** The documented error class: anything else escaping `run` is a crash. */
  readonly allowed: (err: unknown) => boolean;
  /** The i-th input: a mutated seed or a grammar product. */
  readonly generate: (rnd: Rnd, i: number) => Buffer;
  /** Feeds one input; returns true when it was accepted (parsed), false when refused by a documented error. */
  readonly run: (input: Buffer, rnd: Rnd) => boolean;
}

/** Parse limit while fuzzing MANSCDP/SDP: above every capture, low enough that grown inputs are refused fast. */
const FUZZ_MAX_BYTES = 8 * 1024;
const isSipError = (err: unknown): boolean => err instanceof SipParseError;
const allowedOr = (allowed: (err: unknown) => boolean, f: () => unknown): void => {
  try {
    f();
  } catch (err) {
    if (!allowed(err)) throw err;
  }
};

/** Mutation half the time, grammar the other half (grammar products get mutated too, sometimes). */
function mixed(seeds: readonly Buffer[], mutate: (b: Buffer, rnd: Rnd, pool: Buffer[]) => Buffer, grammar: (rnd: Rnd) => Buffer): (rnd: Rnd, i: number) => Buffer {
  const pool = [...seeds];
  return (rnd, i) => {
    if (rnd() < 0.5) return mutate(seeds[i % seeds.length] as Buffer, rnd, pool);
    const g = grammar(rnd);
    return rnd() < 0.3 ? mutate(g, rnd, pool) : g;
  };
}

export interface Corpus {
  readonly sip: Buffer[];
  readonly manscdp: Buffer[];
  readonly sdp: Buffer[];
  readonly mansrtsp: Buffer[];
}

/** Seeds from the repository's captures plus a few built messages. */
export function loadCorpus(): Corpus {
  const bodies = loadAllSampleBodies();
  return {
    sip: loadAllSamples().map((s) => s.wire),
    manscdp: [
      ...bodies.filter((s) => s.kind === 'manscdp').map((s) => s.bytes),
      buildCatalogResponse({ sn: '9', deviceId: '34020000001320000001', sumNum: 2, items: [{ deviceId: '34020000001310000001', name: '中国大门', ptzType: '1' }, { deviceId: '34020000001310000002', event: 'ON' }] }, { charset: 'GB2312' }),
      buildCatalogResponse({ sn: '10', deviceId: '34020000001320000001', sumNum: 1, items: [{ deviceId: '34020000001310000001', name: '通道 1' }] }, { charset: 'UTF-8' }),
    ],
    sdp: [
      ...bodies.filter((s) => s.kind === 'sdp').map((s) => Buffer.from(fillTemplate(s.body))),
      Buffer.from(
        buildPlaybackOffer({
          ownerId: '34020000002000000001', address: '10.0.0.1', port: 30000, ssrc: '1200000001', transport: 'tcp-passive',
          channelId: '34020000001310000001', start: new Date(1704038400000), end: new Date(1704042000000), format: 'v/2/6///a///',
        }),
      ),
    ],
    mansrtsp: [...bodies.filter((s) => s.kind === 'mansrtsp').map((s) => Buffer.from(s.body)), Buffer.from(buildMansrtspSpeed(3, 0.5)), Buffer.from('PAUSE RTSP/1.0\r\nCSeq: 4\r\nPauseTime: now\r\n')],
  };
}

const digest = new DigestServer({ realm: '3402000000', secret: 'fuzz', qop: true });

function exerciseSip(input: Buffer): boolean {
  let msg;
  try {
    msg = parseSipMessage(input);
  } catch (err) {
    if (!isSipError(err)) throw err;
    return false;
  }
  const m = msg;
  for (const f of [() => getVias(m), () => getFrom(m), () => getTo(m), () => getCallId(m), () => getCSeq(m), () => getContacts(m), () => getRouteSet(m, 'Route'), () => getExpires(m), () => getMaxForwards(m), () => getContentType(m)]) allowedOr(isSipError, f);
  const auth = m.headers.get('Authorization');
  if (auth !== undefined) {
    allowedOr(isSipError, () => parseDigestCredentials(auth));
    digest.verify(auth, { method: 'REGISTER', password: '12345678', now: 0 }); // documented never to throw
  }
  allowedOr(isSipError, () => parseSipMessage(serializeSipMessage(m)));
  return true;
}

function manscdp(charset: 'UTF-8' | 'GB2312', corpus: Corpus): FuzzTarget {
  const seeds = corpus.manscdp.filter((b) => (charset === 'UTF-8') === /encoding="utf-8"/i.test(b.subarray(0, 60).toString('latin1')));
  return {
    name: `manscdp ${charset}`,
    weight: 0.125,
    allowed: isGbError,
    generate: mixed(seeds.length > 0 ? seeds : corpus.manscdp, mutateMarkup, (rnd) => manscdpBody(rnd, charset)),
    run: (input) => {
      try {
        const cmd = decodeManscdpCommand(parseManscdp(input, { maxBytes: FUZZ_MAX_BYTES }));
        if (cmd.kind === 'Control/DeviceControl' && cmd.body.command.type === 'PTZCmd') decodePtzCmd(cmd.body.command.ptzCmd);
        return true;
      } catch (err) {
        if (!isGbError(err)) throw err;
        return false;
      }
    },
  };
}

/** A JSON text: a grammar object serialized, or mutated bytes of one. */
function jsonText(keys: readonly string[], primary: string): (rnd: Rnd) => Buffer {
  return (rnd) => {
    const value = randomJsonValue(rnd, keys, primary);
    const text = Buffer.from(JSON.stringify(value) ?? 'null');
    return rnd() < 0.4 ? mutateMarkup(text, rnd, [text]) : text;
  };
}

const randomJsonValue = (rnd: Rnd, keys: readonly string[], primary: string): unknown => (rnd() < 0.9 ? randomObject(rnd, keys, primary) : [randomObject(rnd, keys, primary)]);

/** JSON.parse as the HTTP body parser does (http/body-parsers.ts): a SyntaxError is "not valid JSON" (400). */
function parseJson(input: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(input.toString('utf8')) as unknown };
  } catch (err) {
    if (err instanceof SyntaxError) return { ok: false };
    throw err;
  }
}

const SHORTCUT_FLOW = { transport: 'udp', remoteAddress: '203.0.113.7', remotePort: 1024, localAddress: '10.0.0.5', localPort: 5060 } as const;

/** Everything a stateless answer depends on, as one string (undefined: the shortcut declines). */
function shortcutAnswer(p: PeekedRequest | undefined): string | undefined {
  if (p === undefined) return undefined;
  const via = stampDatagramVia(p, SHORTCUT_FLOW, false);
  const read = JSON.stringify([p.method, p.via, p.viaStart, p.viaEnd, p.from, p.to, p.callId, p.cseq, p.contentType, p.bodyStart, p.body.length]);
  return via === undefined ? read : `${read} ${via.host}:${via.port} ${buildDatagramResponse(p, via, 200, 'fuzz').toString('latin1')}`;
}

export function fuzzTargets(corpus: Corpus): FuzzTarget[] {
  const hooks = createHookHandler({ lookupNode: (id) => (id === 'zlm-a' ? { secret: 's' } : undefined) });
  const hookNames = [...MEDIA_HOOK_NAMES, 'on_play', '', '../x', 'constructor', 'toString'];
  return [
    {
      name: 'sip message',
      weight: 0.25,
      allowed: isSipError,
      generate: mixed(corpus.sip, mutateSip, sipMessage),
      run: exerciseSip,
    },
    {
      name: 'sip tcp framer',
      weight: 0.05,
      allowed: isSipError,
      generate: (rnd, i) => {
        const parts: Buffer[] = [];
        for (let k = 0; k < 3; k++) {
          const base = rnd() < 0.5 ? (corpus.sip[(i + k) % corpus.sip.length] as Buffer) : sipMessage(rnd);
          parts.push(rnd() < 0.5 ? base : mutateSip(base, rnd, corpus.sip));
          if (rnd() < 0.3) parts.push(Buffer.from(rnd() < 0.5 ? '\r\n\r\n' : '\r\n'));
        }
        return Buffer.concat(parts);
      },
      run: (stream, rnd) => {
        const framer = new SipStreamFramer({ maxMessageBytes: 16 * 1024, onKeepalive: () => undefined });
        try {
          for (let i = 0; i < stream.length; ) {
            const len = 1 + Math.floor(rnd() * 1500);
            for (const frame of framer.push(stream.subarray(i, i + len))) exerciseSip(frame);
            i += len;
          }
          return true;
        } catch (err) {
          if (!isSipError(err)) throw err;
          return false;
        }
      },
    },
    {
      // the stateless answers' reader: the usual-head regex (usual-datagram.ts) and the header scanner must
      // read a datagram the same way whenever the regex takes it — what is read, the stamped Via, the bytes
      name: 'sip datagram shortcut',
      weight: 0.1,
      allowed: () => false, // documented never to throw: undefined when unsure
      generate: mixed(corpus.sip, mutateSip, sipMessage),
      run: (input) => {
        const scanned = shortcutAnswer(peekReadings.scanned(input));
        if (!peekReadings.matches(input)) return scanned !== undefined;
        const usual = shortcutAnswer(peekReadings.usual(input));
        if (usual !== scanned) throw new Error(`usual-head reading disagrees with the scanner: ${usual ?? 'declined'} / ${scanned ?? 'declined'}`);
        return usual !== undefined;
      },
    },
    manscdp('GB2312', corpus),
    manscdp('UTF-8', corpus),
    {
      name: 'keepalive scanner',
      weight: 0.1,
      allowed: () => false, // documented never to throw: undefined when unsure
      generate: mixed(corpus.manscdp.filter((b) => /Keepalive/.test(b.toString('latin1'))), mutateMarkup, (rnd) => Buffer.from(keepaliveText(rnd), 'latin1')),
      run: (input) => {
        const scanned = scanKeepalive(input.toString('latin1'));
        if (scanned === undefined) return false;
        // oracle: whenever the scan answers, the full codec says the same (keepalive-scan.ts contract)
        const cmd = decodeManscdpCommand(parseManscdp(input));
        if (cmd.kind !== 'Notify/Keepalive' || cmd.body.sn !== scanned.sn || cmd.body.deviceId !== scanned.deviceId || cmd.body.status !== scanned.status) {
          throw new Error(`scanKeepalive disagrees with the codec: scan ${JSON.stringify(scanned)}, codec ${JSON.stringify(cmd.kind === 'Notify/Keepalive' ? cmd.body : cmd.kind)}`);
        }
        return true;
      },
    },
    {
      name: 'sdp (y=, f=)',
      weight: 0.15,
      allowed: isGbError,
      generate: mixed(corpus.sdp, mutateMarkup, (rnd) => Buffer.from(sdpText(rnd))),
      run: (input) => {
        try {
          const summary = describeSdp(parseSdp(input, { maxBytes: FUZZ_MAX_BYTES }));
          if (summary.format !== undefined) allowedOr(isGbError, () => parseMediaFormat(summary.format as string));
          if (summary.ssrcValid && summary.ssrc !== undefined) parseSsrc(summary.ssrc);
          return true;
        } catch (err) {
          if (!isGbError(err)) throw err;
          return false;
        }
      },
    },
    {
      name: 'mansrtsp',
      weight: 0.1,
      allowed: isGbError,
      generate: mixed(corpus.mansrtsp, mutateMarkup, (rnd) => Buffer.from(mansrtspText(rnd))),
      run: (input) => {
        try {
          parseMansrtsp(input);
          return true;
        } catch (err) {
          if (!isGbError(err)) throw err;
          return false;
        }
      },
    },
    {
      name: 'zlm hook json',
      weight: 0.05,
      allowed: () => false, // JSON errors are handled below; the hook handler is documented never to throw
      generate: jsonText(HOOK_KEYS, 'zlm-a'),
      run: (input, rnd) => {
        const parsed = parseJson(input);
        if (!parsed.ok) return false;
        const r = hooks(hookNames[Math.floor(rnd() * hookNames.length)] as string, parsed.value, rnd() < 0.8 ? { secret: 's' } : { secret: parsed.value });
        if (typeof r.reply.code !== 'number') throw new Error('hook reply without a numeric code');
        return r.ok;
      },
    },
    {
      name: 'control api json',
      weight: 0.05,
      allowed: isCascadeError,
      generate: jsonText(PLATFORM_KEYS, '34020000002000000009'),
      run: (input) => {
        const parsed = parseJson(input);
        if (!parsed.ok) return false;
        // what platforms.create / platforms.channels.replace do with a body (http/routes/platforms.ts)
        const body = (typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value) ? parsed.value : {}) as Record<string, unknown>;
        let accepted = false;
        allowedOr(isCascadeError, () => {
          upstreamPlatform({ localId: '34020000002000000001', ...body, serverId: typeof body.serverId === 'string' ? body.serverId : '34020000002000000009' } as unknown as UpstreamPlatformInput);
          accepted = true;
        });
        const raw = Array.isArray(parsed.value) ? parsed.value : body.channels;
        if (Array.isArray(raw)) {
          for (const c of raw as unknown[]) allowedOr(isCascadeError, () => sharedChannelFromBody(c));
        }
        return accepted;
      },
    },
  ];
}
