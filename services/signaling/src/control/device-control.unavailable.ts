import { ControlUnavailableError } from '../errors/catalog.ts';
import type { DeviceControlService } from './device-control.port.ts';

/** Used until the SIP stack is wired: every live operation fails with ControlUnavailableError. */
export function createUnavailableDeviceControl(): DeviceControlService {
  const fail = (operation: string) => async (): Promise<never> => {
    throw new ControlUnavailableError(operation);
  };
  return {
    queryDeviceInfo: fail('device info'),
    queryDeviceStatus: fail('device status'),
    syncCatalog: fail('catalog sync'),
    catalogProgress: fail('catalog progress'),
    ptz: fail('ptz'),
    deviceControl: fail('device control'),
    queryRecords: fail('record query'),
    recordResult: fail('record result'),
  } satisfies DeviceControlService;
}
