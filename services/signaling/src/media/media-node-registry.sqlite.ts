// MediaNodeRegistry (SPEC §9) in the embedded store of a single instance (storage/
// embedded-store.sqlite.ts), the counterpart of @vms/media's MySQL adapter: the nodes seeded from
// `vms.media.nodes` stay known across restarts. Driver errors become MEDIA_ERR_STORE_QUERY.
import { MediaError, validateMediaNode, type MediaNode, type MediaNodeRegistry } from '@vms/media';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';

const COLUMNS =
  'id, api_base_url, secret, rtp_port_min, rtp_port_max, sdp_ip, stream_ip, hook_base_url, enabled, weight, http_port, rtsp_port, rtmp_port';

interface MediaNodeRecord {
  id: string;
  api_base_url: string;
  secret: string;
  rtp_port_min: number;
  rtp_port_max: number;
  sdp_ip: string;
  stream_ip: string;
  hook_base_url: string;
  enabled: number;
  weight: number;
  http_port: number;
  rtsp_port: number;
  rtmp_port: number;
}

export function createSqliteMediaNodeRegistry(db: EmbeddedDb): MediaNodeRegistry {
  const s = {
    all: db.prepare<[], MediaNodeRecord>(`SELECT ${COLUMNS} FROM media_node ORDER BY id`),
    enabled: db.prepare<[], MediaNodeRecord>(`SELECT ${COLUMNS} FROM media_node WHERE enabled = 1 ORDER BY id`),
    one: db.prepare<[string], MediaNodeRecord>(`SELECT ${COLUMNS} FROM media_node WHERE id = ?`),
    upsert: db.prepare(
      `INSERT INTO media_node (${COLUMNS}) VALUES (${COLUMNS.split(',').map(() => '?').join(', ')}) ON CONFLICT (id) DO UPDATE SET ` +
        'api_base_url = excluded.api_base_url, secret = excluded.secret, rtp_port_min = excluded.rtp_port_min, rtp_port_max = excluded.rtp_port_max, ' +
        'sdp_ip = excluded.sdp_ip, stream_ip = excluded.stream_ip, hook_base_url = excluded.hook_base_url, enabled = excluded.enabled, ' +
        'weight = excluded.weight, http_port = excluded.http_port, rtsp_port = excluded.rtsp_port, rtmp_port = excluded.rtmp_port',
    ),
    remove: db.prepare('DELETE FROM media_node WHERE id = ?'),
  };
  let closed = false;
  const run = async <T>(what: string, fn: () => T): Promise<T> => {
    if (closed) throw new MediaError('MEDIA_ERR_CLOSED', 'media node registry is closed');
    try {
      return fn();
    } catch (err) {
      if (err instanceof MediaError) throw err;
      throw new MediaError('MEDIA_ERR_STORE_QUERY', `${what}: the embedded store rejected the statement`, { cause: err });
    }
  };
  return {
    listEnabled: () => run('listEnabled', () => s.enabled.all().map(toNode)),
    listAll: () => run('listAll', () => s.all.all().map(toNode)),
    get: (id) =>
      run('get', () => {
        const row = s.one.get(id);
        return row === undefined ? null : toNode(row);
      }),
    upsert: (node) =>
      run('upsert', () => {
        const n = validateMediaNode(node);
        s.upsert.run(
          n.id,
          n.apiBaseUrl,
          n.secret,
          n.rtpPortRange.min,
          n.rtpPortRange.max,
          n.sdpIp,
          n.streamIp,
          n.hookBaseUrl,
          n.enabled ? 1 : 0,
          n.weight,
          n.httpPort,
          n.rtspPort,
          n.rtmpPort,
        );
      }),
    remove: (id) => run('remove', () => s.remove.run(id).changes > 0),
    async close() {
      closed = true;
    },
  } satisfies MediaNodeRegistry;
}

function toNode(r: MediaNodeRecord): MediaNode {
  return Object.freeze({
    id: r.id,
    apiBaseUrl: r.api_base_url,
    secret: r.secret,
    rtpPortRange: Object.freeze({ min: r.rtp_port_min, max: r.rtp_port_max }),
    sdpIp: r.sdp_ip,
    streamIp: r.stream_ip,
    hookBaseUrl: r.hook_base_url,
    enabled: r.enabled === 1,
    weight: r.weight,
    httpPort: r.http_port,
    rtspPort: r.rtsp_port,
    rtmpPort: r.rtmp_port,
  });
}
