import { TenantForbiddenError } from '../errors/catalog.ts';
import type { TenantId } from '../devices/device.types.ts';

/** The operator behind a request, from the verified token. */
export interface Principal {
  readonly tenantId: TenantId;
  readonly userId: string;
}

/** SPEC §12: a device of another tenant → 403. */
export function assertSameTenant(principal: Principal, device: { readonly deviceId: string; readonly tenantId: TenantId }): void {
  if (device.tenantId !== principal.tenantId) throw new TenantForbiddenError(device.deviceId);
}

/** Tenant ids fit gb_device.tenant_id VARCHAR(12). */
export const TENANT_ID = /^[A-Za-z0-9_-]{1,12}$/;
