// The registration upsert of the embedded store's write-behind flush (registration-buffer.ts), several
// rows per statement. Issue 11 profile (8 registrations in flight): one `run` per row cost ~30k
// instructions a registration, of which ~8k were per statement, not per row — better-sqlite3's result
// object (two property sets), the bind call, SQLite's statement halt and reset, the cursors opened on
// the table and its two indexes. A batch now goes in as few statements as UPSERT_ROWS allows (a batch
// of 18: 16 + 1 + 1), each row binding the six values it has (the time once, the tenant in the text),
// not ten.
//
// Same rows as the one-row upsert: a new device gets the registration's columns and the schema's
// defaults; a known one keeps its other columns, and keepalive_at never goes back. The rows of one
// statement are applied in order, so a device twice in a batch (the buffer keeps one per device, but
// nothing here relies on it) ends with its later registration, as before.
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';
import { DEFAULT_TENANT, type DeviceRegistration } from './device.types.ts';

/** Rows per statement, largest first (a statement per size, prepared once). */
export const UPSERT_ROWS = [64, 16, 4, 1] as const;

/** The tenant is written into the statement's text: only a plain code may be. */
const TENANT_LITERAL = /^[0-9A-Za-z_-]+$/.test(DEFAULT_TENANT) ? `'${DEFAULT_TENANT}'` : null;
if (TENANT_LITERAL === null) throw new Error(`default tenant ${DEFAULT_TENANT} is not a plain code`);

/** Each row binds device_id, transport, remote_ip, remote_port, the time and expires_sec. */
function upsertText(rows: number): string {
  const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?)').join(', ');
  return (
    'INSERT INTO gb_device (device_id, tenant_id, transport, remote_ip, remote_port, registered_at, keepalive_at, expires_sec, online, created_at, updated_at) ' +
    `SELECT column1, ${TENANT_LITERAL}, column2, column3, column4, column5, column5, column6, 1, column5, column5 FROM (VALUES ${values}) WHERE true ` +
    // `WHERE true`: an upsert after INSERT … SELECT needs it (https://sqlite.org/lang_upsert.html, parsing ambiguity)
    'ON CONFLICT (device_id) DO UPDATE SET ' +
    'transport = excluded.transport, remote_ip = excluded.remote_ip, remote_port = excluded.remote_port, registered_at = excluded.registered_at, ' +
    'keepalive_at = MAX(COALESCE(keepalive_at, excluded.keepalive_at), excluded.keepalive_at), expires_sec = excluded.expires_sec, ' +
    'online = 1, updated_at = excluded.updated_at'
  );
}

/** Writes a batch of registrations (call it inside a transaction: it commits nothing itself). */
export type RegistrationUpsert = (batch: readonly DeviceRegistration[]) => void;

export function createRegistrationUpsert(db: EmbeddedDb): RegistrationUpsert {
  const statements = UPSERT_ROWS.map((rows) => ({ rows, statement: db.prepare(upsertText(rows)) }));
  const params: (string | number)[] = [];
  return (batch) => {
    let at = 0;
    for (const { rows, statement } of statements) {
      while (batch.length - at >= rows) {
        params.length = 0;
        for (let i = at; i < at + rows; i++) {
          const r = batch[i] as DeviceRegistration;
          params.push(r.deviceId, r.transport, r.remoteIp, r.remotePort, r.at, r.expiresSec);
        }
        statement.run(...params); // as arguments: an array is read element by element through V8's API
        at += rows;
      }
    }
  };
}
