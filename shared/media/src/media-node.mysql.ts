/**
 * MediaNodeRegistry on the MySQL/MariaDB `media_node` table (deploy/sql/V003__media_node.sql).
 * The pool is the caller's (one per process, shared with the other stores); driver errors become
 * MEDIA_ERR_STORE_* so a database outage never surfaces as a raw driver error.
 */
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { MediaError } from './errors.ts';
import type { MediaNode, MediaNodeRegistry } from './media-node.port.ts';
import { mediaNodeFromRow, mediaNodeRowValues, MEDIA_NODE_COLUMNS, type MediaNodeRow } from './media-node-row.ts';
import { validateMediaNode } from './media-node.validate.ts';
import { toStoreError } from './store-errors.ts';

const COLUMNS = MEDIA_NODE_COLUMNS;

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

interface MediaNodeRecord extends RowDataPacket, MediaNodeRow {}

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
    return rows.map(mediaNodeFromRow);
  };
  return {
    listEnabled: () => run('listEnabled', () => select('WHERE enabled = 1', [])),
    listAll: () => run('listAll', () => select('', [])),
    get: (id) => run('get', async () => (await select('WHERE id = ?', [id]))[0] ?? null),
    upsert: (node) =>
      run('upsert', async () => {
        const n = validateMediaNode(node);
        await pool.query(UPSERT, mediaNodeRowValues(n));
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
