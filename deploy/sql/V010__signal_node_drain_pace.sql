-- Paced drain (issue 14). A drained shard's devices leave at an even rate over `drain_period_ms` from
-- `drain_started_at` (database clock), not all within one keepalive interval: every reader (SIP edges,
-- redirect servers, shards) computes the same progress from these two columns in SQL, so they agree
-- without talking to each other. Both are NULL while the node is not drained.
ALTER TABLE signal_node
  ADD COLUMN drain_started_at DATETIME(3) NULL AFTER draining,
  ADD COLUMN drain_period_ms INT UNSIGNED NULL AFTER drain_started_at;
