-- A node that stops on purpose (SIGTERM, rolling upgrade) says so: left_at = NOW(3). It reads offline at
-- once, so the cascade leader moves and forwards to it stop without waiting out the online window; its
-- last heartbeat stays as it was for the listing. A later heartbeat (the restarted process) brings it
-- back: a node is online while its last heartbeat is recent and newer than its leaving.
ALTER TABLE signal_node ADD COLUMN left_at DATETIME(3) NULL AFTER last_heartbeat;
