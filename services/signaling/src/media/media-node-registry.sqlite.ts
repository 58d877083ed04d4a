// MediaNodeRegistry (SPEC §9) in the embedded store of a single instance (storage/
// embedded-store.sqlite.ts), the counterpart of @vms/media's MySQL adapter: the nodes seeded from
// `vms.media.nodes` stay known across restarts. Driver errors become MEDIA_ERR_STORE_QUERY.
import { MediaError, mediaNodeFromRow, mediaNodeRowValues, MEDIA_NODE_COLUMNS, validateMediaNode, type MediaNodeRegistry, type MediaNodeRow } from '@vms/media';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';

const COLUMNS = MEDIA_NODE_COLUMNS;

type MediaNodeRecord = MediaNodeRow;

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
    listEnabled: () => run('listEnabled', () => s.enabled.all().map(mediaNodeFromRow)),
    listAll: () => run('listAll', () => s.all.all().map(mediaNodeFromRow)),
    get: (id) =>
      run('get', () => {
        const row = s.one.get(id);
        return row === undefined ? null : mediaNodeFromRow(row);
      }),
    upsert: (node) =>
      run('upsert', () => {
        const n = validateMediaNode(node);
        s.upsert.run(...mediaNodeRowValues(n));
      }),
    remove: (id) => run('remove', () => s.remove.run(id).changes > 0),
    async close() {
      closed = true;
    },
  } satisfies MediaNodeRegistry;
}
