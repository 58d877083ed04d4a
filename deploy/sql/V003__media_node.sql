-- SPEC §9: media nodes (ZLMediaKit servers) streams may be placed on. Configuration only: health and
-- load are runtime state of the signaling instances. id is ZLM's general.mediaServerId, which every
-- hook body carries; it is case-sensitive (utf8mb4_bin) like the value ZLM sends.
CREATE TABLE IF NOT EXISTS media_node (
  id             VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  api_base_url   VARCHAR(512) NOT NULL COMMENT 'ZLM HTTP API base, /index/api/<name> is appended',
  secret         VARCHAR(255) NOT NULL COMMENT 'ZLM api.secret; hooks carry it as ?secret=',
  rtp_port_min   INT          NOT NULL COMMENT 'ZLM rtp_proxy.port_range',
  rtp_port_max   INT          NOT NULL,
  sdp_ip         VARCHAR(64)  NOT NULL COMMENT 'c= address in INVITE SDP: where devices send RTP',
  stream_ip      VARCHAR(255) NOT NULL COMMENT 'host in play URLs handed to viewers',
  hook_base_url  VARCHAR(512) NOT NULL DEFAULT '' COMMENT 'where this ZLM posts its hooks',
  enabled        TINYINT(1)   NOT NULL DEFAULT 1,
  weight         INT          NOT NULL DEFAULT 1 COMMENT 'least-load capacity; 0 drains the node',
  http_port      INT          NOT NULL DEFAULT 80,
  rtsp_port      INT          NOT NULL DEFAULT 554,
  rtmp_port      INT          NOT NULL DEFAULT 1935,
  created_at     DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at     DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_media_node_enabled (enabled, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
