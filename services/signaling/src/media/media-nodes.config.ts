// `vms.media.nodes` (env `VMS_MEDIA_NODES`): media nodes seeded from configuration, for the zero-config
// single instance and the local demo. A JSON array (or, in YAML, a list of maps) of
//   { id, apiBaseUrl, secret, sdpIp, streamIp?, hookBaseUrl?, rtpPortRange?: {min,max} | "min-max",
//     httpPort?, rtspPort?, rtmpPort?, weight?, enabled? }
// with defaults: streamIp = sdpIp, hookBaseUrl '', rtpPortRange 30000-30500, httpPort = the API URL's
// port, rtspPort 554, rtmpPort 1935, weight 1, enabled true. Validated once at start (every problem at
// once, STYLE 1) by the same check as the registry's (validateMediaNode). Pure.
import { isMediaError, validateMediaNode, type MediaNode } from '@vms/media';

export type ParsedNodes = { readonly ok: true; readonly value: readonly MediaNode[] } | { readonly ok: false; readonly problem: string };

const DEFAULT_RTP_RANGE = { min: 30000, max: 30500 };
const DEFAULT_RTSP_PORT = 554;
const DEFAULT_RTMP_PORT = 1935;
const KNOWN_KEYS = new Set(['id', 'apiBaseUrl', 'secret', 'sdpIp', 'streamIp', 'hookBaseUrl', 'rtpPortRange', 'httpPort', 'rtspPort', 'rtmpPort', 'weight', 'enabled']);

/** Parses the JSON text (env) or the YAML list (file, every scalar a string). Never echoes secrets. */
export function parseMediaNodes(raw: unknown): ParsedNodes {
  let list: unknown = raw;
  if (typeof raw === 'string') {
    try {
      list = JSON.parse(raw);
    } catch {
      return { ok: false, problem: 'must be a JSON array of media nodes' };
    }
  }
  if (!Array.isArray(list)) return { ok: false, problem: 'must be a list of media nodes' };
  const problems: string[] = [];
  const nodes: MediaNode[] = [];
  const ids = new Set<string>();
  list.forEach((item, i) => {
    const where = `[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push(`${where} must be a map`);
      return;
    }
    const o = item as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!KNOWN_KEYS.has(k)) problems.push(`${where}.${k}: unknown key`);
    const text = (k: string): string => (typeof o[k] === 'string' ? (o[k] as string).trim() : typeof o[k] === 'number' ? String(o[k]) : '');
    const int = (k: string, def: number): number => {
      const v = o[k];
      if (v === undefined || v === '') return def;
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,6}$/.test(v.trim()) ? Number(v) : NaN;
      if (!Number.isInteger(n)) problems.push(`${where}.${k}: must be an integer`);
      return n;
    };
    const apiBaseUrl = text('apiBaseUrl').replace(/\/+$/, '');
    let apiPort = 80;
    try {
      const u = new URL(apiBaseUrl);
      apiPort = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
    } catch {
      // validateMediaNode reports the URL
    }
    const sdpIp = text('sdpIp');
    const node: MediaNode = {
      id: text('id'),
      apiBaseUrl,
      secret: text('secret'),
      sdpIp,
      streamIp: text('streamIp') === '' ? sdpIp : text('streamIp'),
      hookBaseUrl: text('hookBaseUrl'),
      rtpPortRange: rtpRange(o.rtpPortRange, where, problems),
      httpPort: int('httpPort', apiPort),
      rtspPort: int('rtspPort', DEFAULT_RTSP_PORT),
      rtmpPort: int('rtmpPort', DEFAULT_RTMP_PORT),
      weight: int('weight', 1),
      enabled: o.enabled === undefined ? true : o.enabled === true || o.enabled === 'true',
    };
    if (ids.has(node.id)) problems.push(`${where}.id: duplicate ${JSON.stringify(node.id)}`);
    ids.add(node.id);
    try {
      nodes.push(validateMediaNode(node));
    } catch (err) {
      if (!isMediaError(err)) throw err;
      problems.push(`${where}: ${err.message}`);
    }
  });
  return problems.length > 0 ? { ok: false, problem: problems.join('; ') } : { ok: true, value: Object.freeze(nodes) };
}

function rtpRange(v: unknown, where: string, problems: string[]): { min: number; max: number } {
  if (v === undefined || v === '') return DEFAULT_RTP_RANGE;
  if (typeof v === 'string') {
    const m = /^(\d{1,5})\s*-\s*(\d{1,5})$/.exec(v.trim());
    if (m !== null) return { min: Number(m[1]), max: Number(m[2]) };
  } else if (typeof v === 'object' && v !== null) {
    const r = v as Record<string, unknown>;
    const min = Number(r.min);
    const max = Number(r.max);
    if (Number.isInteger(min) && Number.isInteger(max)) return { min, max };
  }
  problems.push(`${where}.rtpPortRange: must be {min, max} or "min-max"`);
  return DEFAULT_RTP_RANGE;
}
