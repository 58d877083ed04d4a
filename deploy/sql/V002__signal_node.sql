-- SPEC NODE-1: one row per signaling instance, upserted at start and on every node heartbeat.
-- "online" is judged against the database clock (last_heartbeat vs NOW(3)), never a local clock.
-- node_code is case-sensitive (utf8mb4_bin): instance ids "Node-A" and "node-a" are different nodes,
-- and it must sort the same way the election (CASC-1) compares codes.
CREATE TABLE IF NOT EXISTS signal_node (
  node_code           VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  sip_host            VARCHAR(255) NOT NULL,
  sip_port            INT          NOT NULL,
  internal_base_url   VARCHAR(512) NOT NULL,
  cascade_node        TINYINT(1)   NOT NULL DEFAULT 0,
  started_at          DATETIME(3)  NOT NULL,
  last_heartbeat      DATETIME(3)  NOT NULL,
  online_device_count INT          NOT NULL DEFAULT 0,
  version             VARCHAR(64)  NOT NULL DEFAULT '',
  PRIMARY KEY (node_code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
