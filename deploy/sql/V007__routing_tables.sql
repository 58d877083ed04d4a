-- V007: the routing engine's tables (SPEC §10; @vms/routing RoutingStore). Two layers:
--  * the draft, which operators edit row by row through the admin API (routing_destination, routing_set,
--    routing_set_member, routing_rule);
--  * published versions, immutable once written: routing_version (destinations and sets of the version as a
--    JSON snapshot: a few hundred rows at most) and routing_version_rule (the rules, possibly a million).
-- routing_current names the version in force; every instance polls it (the version table of the Kamailio
-- write-up §5.2) and reloads when it changes. Publishing bumps the version; rolling back points
-- routing_current at the version the current one was published over: one UPDATE, nothing copied.
-- Ids are case-sensitive keys compared byte for byte (utf8mb4_bin), like the node codes of V002.

CREATE TABLE IF NOT EXISTS routing_destination (
  id          VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  kind        ENUM('sip', 'http', 'media', 'shard') NOT NULL,
  address     VARCHAR(512) NOT NULL,
  attrs       JSON         NULL COMMENT 'free string attributes for the caller',
  updated_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS routing_set (
  id          VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  algorithm   VARCHAR(32)  NOT NULL COMMENT 'hash-callid hash-from hash-to hash-device round-robin random swrr priority least-load',
  updated_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- No foreign key to routing_destination: a draft may be inconsistent while being edited; publishing
-- validates the whole table and refuses a member whose destination does not exist.
CREATE TABLE IF NOT EXISTS routing_set_member (
  set_id          VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  destination_id  VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  weight          INT          NOT NULL DEFAULT 1,
  priority        INT          NOT NULL DEFAULT 0,
  PRIMARY KEY (set_id, destination_id),
  CONSTRAINT fk_routing_set_member_set FOREIGN KEY (set_id) REFERENCES routing_set (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS routing_rule (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  grp           VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'media, upstream, placement …',
  field         ENUM('device', 'caller', 'callee') NOT NULL,
  prefix        VARCHAR(24)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' COMMENT 'digits; empty = the group default',
  priority      INT          NOT NULL DEFAULT 0,
  set_id        VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  time_window   JSON         NULL,
  gray_release  JSON         NULL,
  enabled       TINYINT(1)   NOT NULL DEFAULT 1,
  updated_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_routing_rule_match (grp, field, prefix)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS routing_version (
  version       BIGINT UNSIGNED NOT NULL,
  parent        BIGINT UNSIGNED NULL COMMENT 'the version in force when this one was published (rollback target)',
  published_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  published_by  VARCHAR(128) NOT NULL DEFAULT '',
  comment       VARCHAR(512) NOT NULL DEFAULT '',
  rule_count    INT          NOT NULL,
  topology      JSON         NOT NULL COMMENT '{"destinations": [...], "sets": [...]} of this version',
  PRIMARY KEY (version)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS routing_version_rule (
  version       BIGINT UNSIGNED NOT NULL,
  id            BIGINT UNSIGNED NOT NULL,
  grp           VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  field         ENUM('device', 'caller', 'callee') NOT NULL,
  prefix        VARCHAR(24)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  priority      INT          NOT NULL,
  set_id        VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  time_window   JSON         NULL,
  gray_release  JSON         NULL,
  PRIMARY KEY (version, id),
  CONSTRAINT fk_routing_version_rule_version FOREIGN KEY (version) REFERENCES routing_version (version) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS routing_current (
  id          TINYINT UNSIGNED NOT NULL,
  version     BIGINT UNSIGNED NULL COMMENT 'NULL: nothing published yet (built-in defaults apply)',
  changed_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  CONSTRAINT chk_routing_current_one_row CHECK (id = 1),
  CONSTRAINT fk_routing_current_version FOREIGN KEY (version) REFERENCES routing_version (version)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

INSERT IGNORE INTO routing_current (id, version) VALUES (1, NULL);
