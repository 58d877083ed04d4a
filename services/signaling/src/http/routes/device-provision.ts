// POST /vms/devices: operator provisioning of a device before (or after) it registers: its tenant,
// label and per-device digest password (SPEC SEC-1, SEC-2). Creates the device offline, or updates the
// given fields of an existing one; fields not given stay. The all-tenant operator role only: moving a
// device between tenants is administration, and a create refused for "another tenant's id" would tell
// a tenant which ids exist elsewhere. Bulk import: `npm run import -- devices.csv` (scripts/import-devices.ts).
import { TENANT_ID } from '../../auth/principal.ts';
import type { Charset, DeviceProvision } from '../../devices/device.types.ts';
import { isGbId } from '../../core/gb-id.ts';
import { BadParameterError } from '../../errors/catalog.ts';
import { operatorRole } from '../access.ts';
import type { HandlerContext, HttpDeps, RouteHandlers } from '../handler.types.ts';
import { deviceView } from '../views.ts';

const CHARSETS: readonly Charset[] = ['GB2312', 'UTF-8'];
export const MAX_DEVICE_NAME = 255;
export const MAX_DEVICE_PASSWORD = 64;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The body as a provisioning record; BadParameterError names the first bad field. */
export function provisionOf(body: unknown): DeviceProvision {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadParameterError('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  const deviceId = b.deviceId;
  if (typeof deviceId !== 'string' || !isGbId(deviceId)) throw new BadParameterError('deviceId', 'must be a 20-digit code');
  const out: { -readonly [K in keyof DeviceProvision]: DeviceProvision[K] } = { deviceId };
  if (b.tenantId !== undefined) {
    if (typeof b.tenantId !== 'string' || !TENANT_ID.test(b.tenantId)) throw new BadParameterError('tenantId', 'must be 1-12 characters of A-Z a-z 0-9 _ -');
    out.tenantId = b.tenantId;
  }
  if (b.name !== undefined) out.name = text(b.name, 'name', MAX_DEVICE_NAME);
  if (b.password !== undefined) out.password = text(b.password, 'password', MAX_DEVICE_PASSWORD);
  if (b.charset !== undefined) {
    const asked = b.charset;
    const c = typeof asked === 'string' ? CHARSETS.find((x) => x === asked.toUpperCase()) : undefined;
    if (c === undefined) throw new BadParameterError('charset', 'must be one of GB2312, UTF-8');
    out.charset = c;
  }
  return out;
}

/** null (clears), or 1..max characters without control characters. */
function text(v: unknown, name: string, max: number): string | null {
  if (v === null) return null;
  if (typeof v !== 'string' || v.length === 0 || v.length > max || CONTROL.test(v)) {
    throw new BadParameterError(name, `must be null or 1-${max} characters without control characters`);
  }
  return v;
}

export function deviceProvisionHandlers(deps: HttpDeps): Pick<RouteHandlers, 'devices.create'> {
  return {
    'devices.create': async (ctx: HandlerContext) => {
      operatorRole(ctx, 'device provisioning');
      const p = provisionOf(ctx.body);
      const existed = (await deps.devices.getDevice(p.deviceId)) !== null;
      const device = await deps.devices.provisionDevice(p, deps.clock.now());
      ctx.log.child({ deviceId: p.deviceId }).info({ created: !existed, tenantId: device.tenantId }, 'device provisioned');
      const owners = await deps.owners.ownersOf([device.deviceId]);
      return { ...deviceView(device, owners.get(device.deviceId) ?? null), created: !existed };
    },
  };
}
