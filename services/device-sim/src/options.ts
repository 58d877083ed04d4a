// Options of one simulated device: documented defaults and units, every problem reported at once,
// one frozen object handed to the rest (STYLE 1).
import { DEFAULT_CATALOG_PAGE_SIZE, isGbId, type ManscdpCharset } from '@vms/gb28181';
import { systemClock, silentLogger, type Clock, type SipLogger, type TimerConfig, type TransportName } from '@vms/sip';
import { DeviceSimConfigError } from './errors.ts';

export interface SimulatedDeviceOptions {
  /** The platform (SIP server) the device registers with. */
  server: {
    host: string;
    port: number;
    /** 20-digit SIP server id, e.g. 34020000002000000001. */
    id: string;
    /** SIP domain / digest realm; default: the first 10 digits of `id` (GB/T 28181 §4.3). */
    domain?: string;
  };
  /** 20-digit device id, e.g. 34020000001320000001. */
  deviceId: string;
  password: string;
  /** SIP transport towards the platform. Default 'udp'. */
  transport?: TransportName;
  /** Address the device binds (SIP and media) and writes in Via/Contact/SDP. Default 127.0.0.1. */
  localHost?: string;
  /** SIP port; default 0 = chosen by the OS. */
  localPort?: number;
  /** Video channels: 1 = an IPC, more = an NVR. Default 1. */
  channels?: number;
  /** Explicit channel ids; default derived from the device id (see channels.ts). */
  channelIds?: readonly string[];
  /** DeviceName; default "模拟设备<last 4 digits>". Channel names are "<name>通道<n>". */
  name?: string;
  manufacturer?: string;
  model?: string;
  firmware?: string;
  /** Charset of every MANSCDP body the device sends. Default GB2312 (§A.2 examples). */
  charset?: ManscdpCharset;
  /**
   * Quirk: the charset named in the bodies' XML declaration when it is not the one the bytes are in (seen in
   * the captures: UTF-8 bytes declared GB2312, sample 06; firmware declaring UTF-8 over GB bytes). Default:
   * the truth (`charset`).
   */
  declaredCharset?: ManscdpCharset;
  /** Expires asked for in REGISTER, seconds. Default 3600. */
  registerExpiresS?: number;
  /** Wait before retrying a failed REGISTER, ms. Default 5000. */
  registerRetryMs?: number;
  /**
   * Follow a 302 to the shard it names (GB/T 28181-2022 §9.1.2.3) and go back to the configured server
   * on a 403 there. Default false: a 302 is a failed REGISTER, as on a 2016 device.
   */
  followRedirect?: boolean;
  /** Keepalive MESSAGE period, seconds (GB/T 28181 default 60). */
  keepaliveIntervalS?: number;
  /** Unanswered keepalives in a row after which the device registers again. Default 3. */
  keepaliveMaxFailures?: number;
  /** Items per Catalog Response MESSAGE. Default 10 (gb28181 DEFAULT_CATALOG_PAGE_SIZE). */
  catalogPageSize?: number;
  /** Items per RecordInfo Response MESSAGE. Default 10. */
  recordPageSize?: number;
  /** Length of each synthetic record file, seconds. Default 1800. */
  recordSegmentS?: number;
  /** At most this many records per RecordInfo answer. Default 100. */
  maxRecords?: number;
  /** Video frames per second. Default 25. */
  fps?: number;
  /** Frames between key frames (key frames carry SPS/PPS and the PS system header + PSM). Default 25. */
  gopFrames?: number;
  /** Bytes of dummy H.264 per frame: key frames / other frames. Default 4000 / 800. */
  keyFrameBytes?: number;
  deltaFrameBytes?: number;
  /** Caps the media length of Playback/Download sessions, ms (default: the INVITE's t= range). */
  playbackMaxMs?: number;
  /** Longest subscription the device grants, s (RFC 6665 §4.2.1.1: a notifier may shorten Expires); default: what is asked. */
  subscriptionMaxExpiresS?: number;
  /** Local time offset of MANSCDP times, minutes east of UTC; default the host's. China: 480. */
  utcOffsetMinutes?: number;
  userAgent?: string;
  /**
   * GB/T 28181 revision spoken: '2022' (default) announces `X-GB-ver: 3.0` in REGISTER and answers the
   * 2022 commands; '2016' announces 2.0 and ignores them (SIP 200, no answer), as a 2016 device does.
   */
  gbVersion?: '2016' | '2022';
  clock?: Clock;
  logger?: SipLogger;
  /** SIP transaction timers (tests shorten T1). */
  sipTimers?: Partial<TimerConfig>;
}

export interface ResolvedDeviceOptions {
  readonly server: Readonly<{ host: string; port: number; id: string; domain: string }>;
  readonly deviceId: string;
  readonly password: string;
  readonly transport: TransportName;
  readonly localHost: string;
  readonly localPort: number;
  readonly channels: number;
  readonly channelIds: readonly string[] | undefined;
  readonly name: string;
  readonly manufacturer: string;
  readonly model: string;
  readonly firmware: string;
  readonly charset: ManscdpCharset;
  readonly declaredCharset: ManscdpCharset;
  readonly registerExpiresS: number;
  readonly registerRetryMs: number;
  readonly followRedirect: boolean;
  readonly keepaliveIntervalS: number;
  readonly keepaliveMaxFailures: number;
  readonly catalogPageSize: number;
  readonly recordPageSize: number;
  readonly recordSegmentS: number;
  readonly maxRecords: number;
  readonly fps: number;
  readonly gopFrames: number;
  readonly keyFrameBytes: number;
  readonly deltaFrameBytes: number;
  readonly playbackMaxMs: number | undefined;
  readonly subscriptionMaxExpiresS: number | undefined;
  readonly utcOffsetMinutes: number | undefined;
  readonly userAgent: string;
  readonly gbVersion: '2016' | '2022';
  readonly clock: Clock;
  readonly logger: SipLogger;
  readonly sipTimers: Partial<TimerConfig> | undefined;
}

export const DEFAULT_REGISTER_EXPIRES_S = 3600;
export const DEFAULT_REGISTER_RETRY_MS = 5000;
/** GB/T 28181-2016 §9.6.1: keepalive every 60 s by default, offline after 3 missed. */
export const DEFAULT_KEEPALIVE_INTERVAL_S = 60;
export const DEFAULT_KEEPALIVE_MAX_FAILURES = 3;
export const DEFAULT_RECORD_PAGE_SIZE = 10;
export const DEFAULT_RECORD_SEGMENT_S = 1800;
export const DEFAULT_MAX_RECORDS = 100;
export const DEFAULT_FPS = 25;
/** A 1500-byte Ethernet MTU less IP/UDP/RTP headers leaves room for this much PS per RTP packet. */
export const MAX_RTP_PAYLOAD_BYTES = 1400;
const CHARSETS: readonly ManscdpCharset[] = ['GB2312', 'GBK', 'GB18030', 'UTF-8'];

export function resolveDeviceOptions(o: SimulatedDeviceOptions): ResolvedDeviceOptions {
  const issues: string[] = [];
  const positiveInt = (key: string, v: number | undefined, def: number, max = Number.MAX_SAFE_INTEGER): number => {
    const value = v ?? def;
    if (!Number.isInteger(value) || value < 1 || value > max) issues.push(`${key}: must be an integer in 1..${max}, got ${String(v)}`);
    return value;
  };
  if (!isGbId(o.deviceId)) issues.push(`deviceId: must be a 20-digit GB/T 28181 id, got ${JSON.stringify(o.deviceId)}`);
  if (!isGbId(o.server.id)) issues.push(`server.id: must be a 20-digit GB/T 28181 id, got ${JSON.stringify(o.server.id)}`);
  if (o.server.host === '') issues.push('server.host: required');
  if (!Number.isInteger(o.server.port) || o.server.port < 1 || o.server.port > 65535) issues.push(`server.port: must be in 1..65535, got ${o.server.port}`);
  if (o.password === '') issues.push('password: required');
  const transport = o.transport ?? 'udp';
  if (transport !== 'udp' && transport !== 'tcp') issues.push(`transport: udp or tcp, got ${String(transport)}`);
  const localPort = o.localPort ?? 0;
  if (!Number.isInteger(localPort) || localPort < 0 || localPort > 65535) issues.push(`localPort: must be in 0..65535, got ${localPort}`);
  const channels = positiveInt('channels', o.channelIds?.length ?? o.channels, 1, 9999);
  if (o.channelIds !== undefined) {
    const bad = o.channelIds.filter((id) => !isGbId(id));
    if (bad.length > 0) issues.push(`channelIds: not 20-digit ids: ${bad.join(', ')}`);
    if (new Set(o.channelIds).size !== o.channelIds.length) issues.push('channelIds: duplicates');
  }
  if (o.gbVersion !== undefined && o.gbVersion !== '2016' && o.gbVersion !== '2022') issues.push(`gbVersion: 2016 or 2022, got ${String(o.gbVersion)}`);
  const charset = o.charset ?? 'GB2312';
  if (!CHARSETS.includes(charset)) issues.push(`charset: one of ${CHARSETS.join(', ')}, got ${String(charset)}`);
  const declaredCharset = o.declaredCharset ?? charset;
  if (!CHARSETS.includes(declaredCharset)) issues.push(`declaredCharset: one of ${CHARSETS.join(', ')}, got ${String(declaredCharset)}`);
  const resolved: ResolvedDeviceOptions = {
    server: { host: o.server.host, port: o.server.port, id: o.server.id, domain: o.server.domain ?? o.server.id.slice(0, 10) },
    deviceId: o.deviceId,
    password: o.password,
    transport,
    localHost: o.localHost ?? '127.0.0.1',
    localPort,
    channels,
    channelIds: o.channelIds === undefined ? undefined : [...o.channelIds],
    name: o.name ?? `模拟设备${o.deviceId.slice(-4)}`,
    manufacturer: o.manufacturer ?? 'VMS',
    model: o.model ?? (channels > 1 ? 'NVR-SIM' : 'IPC-SIM'),
    firmware: o.firmware ?? 'V1.0.0',
    charset,
    declaredCharset,
    registerExpiresS: positiveInt('registerExpiresS', o.registerExpiresS, DEFAULT_REGISTER_EXPIRES_S),
    registerRetryMs: positiveInt('registerRetryMs', o.registerRetryMs, DEFAULT_REGISTER_RETRY_MS),
    followRedirect: o.followRedirect ?? false,
    keepaliveIntervalS: positive('keepaliveIntervalS', o.keepaliveIntervalS, DEFAULT_KEEPALIVE_INTERVAL_S, issues),
    keepaliveMaxFailures: positiveInt('keepaliveMaxFailures', o.keepaliveMaxFailures, DEFAULT_KEEPALIVE_MAX_FAILURES),
    catalogPageSize: positiveInt('catalogPageSize', o.catalogPageSize, DEFAULT_CATALOG_PAGE_SIZE),
    recordPageSize: positiveInt('recordPageSize', o.recordPageSize, DEFAULT_RECORD_PAGE_SIZE),
    recordSegmentS: positiveInt('recordSegmentS', o.recordSegmentS, DEFAULT_RECORD_SEGMENT_S),
    maxRecords: positiveInt('maxRecords', o.maxRecords, DEFAULT_MAX_RECORDS),
    fps: positiveInt('fps', o.fps, DEFAULT_FPS, 120),
    gopFrames: positiveInt('gopFrames', o.gopFrames, DEFAULT_FPS),
    keyFrameBytes: positiveInt('keyFrameBytes', o.keyFrameBytes, 4000, 1_000_000),
    deltaFrameBytes: positiveInt('deltaFrameBytes', o.deltaFrameBytes, 800, 1_000_000),
    playbackMaxMs: o.playbackMaxMs === undefined ? undefined : positiveInt('playbackMaxMs', o.playbackMaxMs, 1),
    subscriptionMaxExpiresS: o.subscriptionMaxExpiresS === undefined ? undefined : positiveInt('subscriptionMaxExpiresS', o.subscriptionMaxExpiresS, 1),
    utcOffsetMinutes: o.utcOffsetMinutes,
    userAgent: o.userAgent ?? 'VMS device simulator',
    gbVersion: o.gbVersion ?? '2022',
    clock: o.clock ?? systemClock,
    logger: o.logger ?? silentLogger,
    sipTimers: o.sipTimers,
  };
  if (issues.length > 0) throw new DeviceSimConfigError(issues);
  return Object.freeze(resolved);
}

/** A positive number (fractions allowed: tests use sub-second keepalives). */
function positive(key: string, v: number | undefined, def: number, issues: string[]): number {
  const value = v ?? def;
  if (!Number.isFinite(value) || value <= 0) issues.push(`${key}: must be a positive number, got ${String(v)}`);
  return value;
}
