import type { TenantId } from '../devices/device.types.ts';

/**
 * What a token may do (SPEC SEC-2): `tenant` sees and changes only its own tenant's resources;
 * `operator` manages every tenant and the infrastructure (node table). The role is the token's `role`
 * claim; a token without one is a tenant token, so an all-tenant role is never implied (not even by the
 * default tenant `000000`).
 */
export const ROLES = ['tenant', 'operator'] as const;
export type Role = (typeof ROLES)[number];

/** The caller behind a request, from the verified token. */
export interface Principal {
  readonly tenantId: TenantId;
  readonly userId: string;
  readonly role: Role;
}

export const isOperator = (principal: Principal): boolean => principal.role === 'operator';

/** SPEC SEC-2: true when `principal` may see or change a resource of `tenantId`. */
export const mayAccessTenant = (principal: Principal, tenantId: TenantId): boolean => principal.role === 'operator' || principal.tenantId === tenantId;

/** Tenant ids fit gb_device.tenant_id VARCHAR(12); the default tenant is `000000`. */
export const TENANT_ID = /^[A-Za-z0-9_-]{1,12}$/;

/** User ids are only logged and shown: 1-64 characters, no spaces or control characters. */
export const USER_ID = /^[^\p{C}\p{Z}]{1,64}$/u;
