/**
 * MediaNodeRegistry on the MySQL/MariaDB `media_node` table (deploy/sql/V003__media_node.sql).
 * The pool is the caller's (one per process, shared with the other stores); driver errors become
 * MEDIA_ERR_STORE_* so a database outage never surfaces as a raw driver error.
 */
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { MediaError } from './errors.ts';
import type { MediaNode, MediaNodeRegistry } from './media-node.port.ts';
import { validateMediaNode } from './media-node.validate.ts';
import { toStoreError } from './store-errors.ts';

const COLUMNS = `id, api_base_url, secret, rtp_port_min, rtp_port_max, sdp_ip, stream_ip, hook_base_url,
  enabled, weight, http_port, rtsp_port, rtmp_port`;

const UPSERT = `
INSERT INTO media_node (${COLUMNS})
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
  api_base_url = VALUES(api_base_url),
  secret = VALUES(secret),
  rtp_port_min = VALUES(rtp_port_min),
  rtp_port_max = VALUES(rtp_port_max),
  sdp_ip = VALUES(sdp_ip),
  stream_ip = VALUES(stream_ip),
  hook_base_url = VALUES(hook_base_url),
  enabled = VALUES(enabled),
  weight = VALUES(weight),
  http_port = VALUES(http_port),
  rtsp_port = VALUES(rtsp_port),
  rtmp_port = VALUES(rtmp_port)`;

interface MediaNodeRecord extends RowDataPacket {
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

export function createMysqlMediaNodeRegistry(pool: Pool): MediaNodeRegistry {
  let closed = false;
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) throw new MediaError('MEDIA_ERR_CLOSED', 'media node registry is closed');
    try {
      return await fn();
    } catch (err) {
      throw toStoreError(err, what);
    }
  };
  const select = async (where: string, params: unknown[]): Promise<MediaNode[]> => {
    const [rows] = await pool.query<MediaNodeRecord[]>(`SELECT ${COLUMNS} FROM media_node ${where} ORDER BY id`, params);
    return rows.map(toNode);
  };
  return {
    listEnabled: () => run('listEnabled', () => select('WHERE enabled = 1', [])),
    listAll: () => run('listAll', () => select('', [])),
    get: (id) => run('get', async () => (await select('WHERE id = ?', [id]))[0] ?? null),
    upsert: (node) =>
      run('upsert', async () => {
        const n = validateMediaNode(node);
        await pool.query(UPSERT, [
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
        ]);
      }),
    remove: (id) =>
      run('remove', async () => {
        const [res] = await pool.query<ResultSetHeader>('DELETE FROM media_node WHERE id = ?', [id]);
        return res.affectedRows > 0;
      }),
    async close() {
      closed = true;
    },
  } satisfies MediaNodeRegistry;
}

function toNode(r: MediaNodeRecord): MediaNode {
  return {
    id: r.id,
    apiBaseUrl: r.api_base_url,
    secret: r.secret,
    rtpPortRange: { min: r.rtp_port_min, max: r.rtp_port_max },
    sdpIp: r.sdp_ip,
    streamIp: r.stream_ip,
    hookBaseUrl: r.hook_base_url,
    enabled: r.enabled === 1,
    weight: r.weight,
    httpPort: r.http_port,
    rtspPort: r.rtsp_port,
    rtmpPort: r.rtmp_port,
  };
}
