-- V006: every upstream platform belongs to a tenant (SPEC SEC-2): a tenant's operators see and change only
-- its own platforms and share only its own channels with them; the all-tenant operator role sees all.
-- Existing platforms join the default tenant, as unprovisioned devices do (gb_device.tenant_id, V001).
-- server_id stays the key: an upstream's SIP id is unique across tenants (one registration per upstream).
ALTER TABLE upstream_platform
  ADD COLUMN tenant_id VARCHAR(12) NOT NULL DEFAULT '000000' COMMENT 'owning tenant, 000000 = default' AFTER server_id,
  ADD KEY idx_upstream_platform_tenant (tenant_id, server_id);
