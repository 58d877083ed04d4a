-- V004: upstream (parent) GB28181 platforms this platform registers to as a lower platform, and the
-- channels each one receives (SPEC CASC-2; @vms/cascade PlatformRepository). Configuration only: the
-- registration state is runtime state of the cascade leader and is never stored.
-- Ids are case-sensitive keys compared byte for byte (utf8mb4_bin), like the node codes of V002.

CREATE TABLE IF NOT EXISTS upstream_platform (
  server_id              VARCHAR(20)   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the upstream 20-digit SIP id',
  name                   VARCHAR(255)  NOT NULL DEFAULT '',
  domain                 VARCHAR(64)   NOT NULL COMMENT 'the upstream SIP domain (digest realm)',
  host                   VARCHAR(255)  NOT NULL,
  port                   INT           NOT NULL DEFAULT 5060,
  transport              ENUM('UDP', 'TCP')      NOT NULL DEFAULT 'UDP',
  password               VARCHAR(255)  NOT NULL DEFAULT '' COMMENT 'digest password; empty = no credentials',
  register_expires_s     INT           NOT NULL DEFAULT 3600,
  keepalive_interval_s   INT           NOT NULL DEFAULT 60,
  keepalive_max_failures INT           NOT NULL DEFAULT 3 COMMENT 'consecutive failed keepalives before offline + re-register',
  enabled                TINYINT(1)    NOT NULL DEFAULT 1,
  charset                ENUM('GB2312', 'UTF-8') NOT NULL DEFAULT 'GB2312' COMMENT 'charset of MANSCDP bodies sent to it',
  local_id               VARCHAR(20)   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the id we present (our server id)',
  catalog_group_id       VARCHAR(20)   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT '215/216 item above the shared channels',
  catalog_group_name     VARCHAR(255)  NULL,
  created_at             DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at             DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (server_id),
  KEY idx_upstream_platform_enabled (enabled, server_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- No foreign key to gb_channel on purpose: when a channel is deleted its DEL notify must still find
-- the platforms it was shared with; the service drops the shares afterwards (forgetChannels).
CREATE TABLE IF NOT EXISTS upstream_platform_channel (
  platform_id       VARCHAR(20)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  device_id         VARCHAR(20)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  channel_id        VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  catalog_group_id  VARCHAR(20)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT 'BusinessGroupID at this platform',
  parent_id         VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT 'ParentID at this platform',
  created_at        DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (platform_id, device_id, channel_id),
  KEY idx_upstream_platform_channel_channel (device_id, channel_id),
  CONSTRAINT fk_upstream_platform_channel_platform FOREIGN KEY (platform_id) REFERENCES upstream_platform (server_id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
