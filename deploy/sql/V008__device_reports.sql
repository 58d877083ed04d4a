-- V008: what devices report on their own — alarms (GB/T 28181-2016 §9.4) and mobile positions (§9.11) —
-- with a bounded history per device and in total (trimmed by the service, SPEC SEC-3), and which
-- subscriptions the platform keeps to each device (§9.11), read by whichever instance owns it.
-- Values are kept as the device wrote them (strings: coordinates must come back unchanged).

CREATE TABLE IF NOT EXISTS device_alarm (
  id           BIGINT        NOT NULL AUTO_INCREMENT,
  device_id    VARCHAR(20)   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  source_id    VARCHAR(64)   NOT NULL COMMENT 'DeviceID of the body: the device, a channel or an alarm input',
  received_at  DATETIME(3)   NOT NULL,
  priority     VARCHAR(8)    NOT NULL,
  method       VARCHAR(8)    NOT NULL,
  type         VARCHAR(16)   NULL,
  alarm_time   VARCHAR(32)   NULL COMMENT 'AlarmTime as written by the device',
  description  VARCHAR(512)  NULL,
  longitude    VARCHAR(32)   NULL,
  latitude     VARCHAR(32)   NULL,
  via          ENUM('message', 'notify') NOT NULL,
  PRIMARY KEY (id),
  KEY idx_device_alarm_device (device_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS device_position (
  id           BIGINT        NOT NULL AUTO_INCREMENT,
  device_id    VARCHAR(20)   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  source_id    VARCHAR(64)   NOT NULL,
  received_at  DATETIME(3)   NOT NULL,
  time         VARCHAR(32)   NOT NULL COMMENT 'GPS time as written by the device',
  longitude    VARCHAR(32)   NOT NULL,
  latitude     VARCHAR(32)   NOT NULL,
  speed        VARCHAR(16)   NULL,
  direction    VARCHAR(16)   NULL,
  altitude     VARCHAR(16)   NULL,
  PRIMARY KEY (id),
  KEY idx_device_position_device (device_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS device_subscription (
  device_id        VARCHAR(20)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  catalog          TINYINT(1)   NOT NULL DEFAULT 0,
  alarm            TINYINT(1)   NOT NULL DEFAULT 0,
  mobile_position  TINYINT(1)   NOT NULL DEFAULT 0,
  interval_s       INT          NOT NULL DEFAULT 5 COMMENT 'MobilePosition report interval asked for',
  updated_at       DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (device_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
