-- Paced return (issue 14). An undrained shard takes its devices back at an even rate over `join_period_ms`
-- from `join_started_at` (database clock), as a drain releases them, not all within one keepalive interval.
-- `join_from` is how far its drain had got when it was undrained (1 = finished): the devices it still held
-- (their slot at or above it) stay; the released ones come back paced. All NULL while not returning.
ALTER TABLE signal_node
  ADD COLUMN join_started_at DATETIME(3) NULL AFTER drain_period_ms,
  ADD COLUMN join_period_ms INT UNSIGNED NULL AFTER join_started_at,
  ADD COLUMN join_from DOUBLE NULL AFTER join_period_ms;
