// Simulated devices wired to a TestPlatform with test-sized timers.
import { createSimulatedDevice, type SimulatedDevice, type SimulatedDeviceOptions } from '../../src/index.ts';
import { PASSWORD, SERVER_ID, type TestPlatform } from './platform.ts';

export const DEVICE_ID = '34020000001320000001';

export function deviceFor(platform: TestPlatform, overrides: Partial<SimulatedDeviceOptions> = {}): SimulatedDevice {
  return createSimulatedDevice({
    server: overrides.server ?? { host: '127.0.0.1', port: platform.port, id: SERVER_ID },
    deviceId: DEVICE_ID,
    password: PASSWORD,
    keepaliveIntervalS: 60,
    sipTimers: { T1: 50, T2: 400, T4: 500 },
    utcOffsetMinutes: 480,
    ...overrides,
  });
}

/** Starts the device and waits until it is registered. */
export async function registeredDevice(platform: TestPlatform, overrides: Partial<SimulatedDeviceOptions> = {}): Promise<SimulatedDevice> {
  const device = deviceFor(platform, overrides);
  await device.start();
  if (!device.registered) throw new Error('device did not register');
  return device;
}
