-- Device placement (issue 14). `draining`: an operator drains a shard before an upgrade; placement gives it
-- no device and its devices move at their next registration. Kept across heartbeats and restarts until
-- undrained (a stop in progress reads as draining through left_at, without this column).
-- `placement_group`: the shard group (region) the instance serves; placement rules map device-code
-- prefixes to groups.
ALTER TABLE signal_node
  ADD COLUMN draining TINYINT(1) NOT NULL DEFAULT 0 AFTER left_at,
  ADD COLUMN placement_group VARCHAR(64) NOT NULL DEFAULT 'default' AFTER draining;
