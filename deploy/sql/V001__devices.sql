-- V001: GB28181 devices and their channels (services/signaling DeviceRepository).
-- Ownership is runtime state in Redis and is deliberately not stored here (SPEC OWN-1).
-- Times are DATETIME(3) written by the application (UTC).

CREATE TABLE IF NOT EXISTS gb_device (
  device_id      VARCHAR(20)              NOT NULL COMMENT '20-digit GB28181 device id',
  tenant_id      VARCHAR(12)              NOT NULL DEFAULT '000000' COMMENT 'owning tenant, 000000 = default',
  name           VARCHAR(255)             NULL,
  manufacturer   VARCHAR(255)             NULL,
  model          VARCHAR(255)             NULL,
  firmware       VARCHAR(255)             NULL,
  transport      ENUM('UDP', 'TCP')       NOT NULL DEFAULT 'UDP',
  charset        ENUM('GB2312', 'UTF-8')  NOT NULL DEFAULT 'GB2312' COMMENT 'charset of MANSCDP bodies',
  password       VARCHAR(255)             NULL COMMENT 'per-device digest password, NULL = platform password',
  remote_ip      VARCHAR(64)              NULL,
  remote_port    INT UNSIGNED             NULL,
  registered_at  DATETIME(3)              NULL,
  keepalive_at   DATETIME(3)              NULL,
  expires_sec    INT UNSIGNED             NULL COMMENT 'registration lifetime granted',
  online         TINYINT(1)               NOT NULL DEFAULT 0,
  channel_count  INT UNSIGNED             NOT NULL DEFAULT 0,
  created_at     DATETIME(3)              NOT NULL,
  updated_at     DATETIME(3)              NOT NULL,
  PRIMARY KEY (device_id),
  KEY idx_gb_device_tenant (tenant_id, device_id),
  KEY idx_gb_device_online_keepalive (online, keepalive_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS gb_channel (
  device_id      VARCHAR(20)              NOT NULL,
  channel_id     VARCHAR(64)              NOT NULL COMMENT 'normally a 20-digit code, kept as reported',
  name           VARCHAR(255)             NULL,
  manufacturer   VARCHAR(255)             NULL,
  model          VARCHAR(255)             NULL,
  owner          VARCHAR(255)             NULL,
  civil_code     VARCHAR(32)              NULL,
  address        VARCHAR(255)             NULL,
  parent_id      VARCHAR(255)             NULL,
  parental       TINYINT(1)               NOT NULL DEFAULT 0,
  status         ENUM('ON', 'OFF')        NOT NULL DEFAULT 'ON',
  longitude      DOUBLE                   NULL,
  latitude       DOUBLE                   NULL,
  ptz_type       TINYINT UNSIGNED         NULL COMMENT '1 dome, 2 half-dome, 3 fixed, 4 remote-controlled',
  extra          JSON                     NULL COMMENT 'catalog item fields not mapped to columns',
  updated_at     DATETIME(3)              NOT NULL,
  PRIMARY KEY (device_id, channel_id),
  KEY idx_gb_channel_channel (channel_id, updated_at),
  CONSTRAINT fk_gb_channel_device FOREIGN KEY (device_id) REFERENCES gb_device (device_id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
