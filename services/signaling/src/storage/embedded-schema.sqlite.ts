// Schema of the embedded store (storage/embedded-store.sqlite.ts): the SQLite counterparts of
// deploy/sql V001 (devices, channels), V003 (media nodes), V004 (upstream platforms, shares), V006
// (the platform's tenant) and V007 (routing tables).
// Times are epoch milliseconds (INTEGER). A version is never edited once released: add the next one.

export interface EmbeddedMigration {
  readonly version: number;
  readonly sql: string;
}

export const EMBEDDED_MIGRATIONS: readonly EmbeddedMigration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE gb_device (
  device_id      TEXT    NOT NULL PRIMARY KEY,
  tenant_id      TEXT    NOT NULL DEFAULT '000000',
  name           TEXT    NULL,
  manufacturer   TEXT    NULL,
  model          TEXT    NULL,
  firmware       TEXT    NULL,
  transport      TEXT    NOT NULL DEFAULT 'UDP' CHECK (transport IN ('UDP', 'TCP')),
  charset        TEXT    NOT NULL DEFAULT 'GB2312' CHECK (charset IN ('GB2312', 'UTF-8')),
  password       TEXT    NULL,
  remote_ip      TEXT    NULL,
  remote_port    INTEGER NULL,
  registered_at  INTEGER NULL,
  keepalive_at   INTEGER NULL,
  expires_sec    INTEGER NULL,
  online         INTEGER NOT NULL DEFAULT 0,
  channel_count  INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_gb_device_tenant ON gb_device (tenant_id, device_id);
CREATE INDEX idx_gb_device_online_keepalive ON gb_device (online, keepalive_at);

CREATE TABLE gb_channel (
  device_id      TEXT    NOT NULL REFERENCES gb_device (device_id) ON DELETE CASCADE,
  channel_id     TEXT    NOT NULL,
  name           TEXT    NULL,
  manufacturer   TEXT    NULL,
  model          TEXT    NULL,
  owner          TEXT    NULL,
  civil_code     TEXT    NULL,
  address        TEXT    NULL,
  parent_id      TEXT    NULL,
  parental       INTEGER NOT NULL DEFAULT 0,
  status         TEXT    NOT NULL DEFAULT 'ON' CHECK (status IN ('ON', 'OFF')),
  longitude      REAL    NULL,
  latitude       REAL    NULL,
  ptz_type       INTEGER NULL,
  extra          TEXT    NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (device_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX idx_gb_channel_channel ON gb_channel (channel_id, updated_at);

CREATE TABLE media_node (
  id             TEXT    NOT NULL PRIMARY KEY,
  api_base_url   TEXT    NOT NULL,
  secret         TEXT    NOT NULL,
  rtp_port_min   INTEGER NOT NULL,
  rtp_port_max   INTEGER NOT NULL,
  sdp_ip         TEXT    NOT NULL,
  stream_ip      TEXT    NOT NULL,
  hook_base_url  TEXT    NOT NULL DEFAULT '',
  enabled        INTEGER NOT NULL DEFAULT 1,
  weight         INTEGER NOT NULL DEFAULT 1,
  http_port      INTEGER NOT NULL,
  rtsp_port      INTEGER NOT NULL,
  rtmp_port      INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE upstream_platform (
  server_id              TEXT    NOT NULL PRIMARY KEY,
  name                   TEXT    NOT NULL DEFAULT '',
  domain                 TEXT    NOT NULL,
  host                   TEXT    NOT NULL,
  port                   INTEGER NOT NULL,
  transport              TEXT    NOT NULL CHECK (transport IN ('UDP', 'TCP')),
  password               TEXT    NOT NULL DEFAULT '',
  register_expires_s     INTEGER NOT NULL,
  keepalive_interval_s   INTEGER NOT NULL,
  keepalive_max_failures INTEGER NOT NULL,
  enabled                INTEGER NOT NULL DEFAULT 1,
  charset                TEXT    NOT NULL CHECK (charset IN ('GB2312', 'UTF-8')),
  local_id               TEXT    NOT NULL,
  catalog_group_id       TEXT    NULL,
  catalog_group_name     TEXT    NULL
) WITHOUT ROWID;

-- No foreign key to gb_channel (as in V004): a deleted channel's DEL notify must still find its platforms.
CREATE TABLE upstream_platform_channel (
  platform_id       TEXT NOT NULL REFERENCES upstream_platform (server_id) ON DELETE CASCADE,
  device_id         TEXT NOT NULL,
  channel_id        TEXT NOT NULL,
  catalog_group_id  TEXT NULL,
  parent_id         TEXT NULL,
  PRIMARY KEY (platform_id, device_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX idx_upstream_platform_channel_channel ON upstream_platform_channel (device_id, channel_id);
`,
  },
  {
    // V006 (SPEC SEC-2): every upstream platform belongs to a tenant; existing ones join the default
    // tenant, as unprovisioned devices do. server_id stays the key (unique across tenants).
    version: 2,
    sql: `
ALTER TABLE upstream_platform ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '000000';
CREATE INDEX idx_upstream_platform_tenant ON upstream_platform (tenant_id, server_id);
`,
  },
  {
    // V007 (SPEC §10): the routing engine's draft, published versions and the pointer to the one in force
    // (routing/routing-store.sqlite.ts). A set's members live in the set row as JSON: an embedded table
    // has a few sets, edited whole. JSON columns are TEXT.
    version: 3,
    sql: `
CREATE TABLE routing_destination (
  id       TEXT NOT NULL PRIMARY KEY,
  kind     TEXT NOT NULL CHECK (kind IN ('sip', 'http', 'media', 'shard')),
  address  TEXT NOT NULL,
  attrs    TEXT NULL
) WITHOUT ROWID;
CREATE TABLE routing_set (
  id         TEXT NOT NULL PRIMARY KEY,
  algorithm  TEXT NOT NULL,
  members    TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE routing_rule (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  grp           TEXT    NOT NULL,
  field         TEXT    NOT NULL,
  prefix        TEXT    NOT NULL DEFAULT '',
  priority      INTEGER NOT NULL DEFAULT 0,
  set_id        TEXT    NOT NULL,
  time_window   TEXT    NULL,
  gray_release  TEXT    NULL,
  enabled       INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE routing_version (
  version       INTEGER NOT NULL PRIMARY KEY,
  parent        INTEGER NULL,
  published_at  INTEGER NOT NULL,
  published_by  TEXT    NOT NULL,
  comment       TEXT    NOT NULL,
  rule_count    INTEGER NOT NULL,
  topology      TEXT    NOT NULL
);
CREATE TABLE routing_version_rule (
  version       INTEGER NOT NULL REFERENCES routing_version (version) ON DELETE CASCADE,
  id            INTEGER NOT NULL,
  grp           TEXT    NOT NULL,
  field         TEXT    NOT NULL,
  prefix        TEXT    NOT NULL,
  priority      INTEGER NOT NULL,
  set_id        TEXT    NOT NULL,
  time_window   TEXT    NULL,
  gray_release  TEXT    NULL,
  PRIMARY KEY (version, id)
) WITHOUT ROWID;
CREATE TABLE routing_current (
  id       INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  version  INTEGER NULL
);
INSERT INTO routing_current (id, version) VALUES (1, NULL);
`,
  },
];
