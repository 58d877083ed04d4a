// Many simulated devices at once (load tests, the CLI's --count): consecutive device ids, one SIP
// stack each, started with bounded concurrency so a thousand REGISTERs do not leave in one burst.
import { deviceIdAt } from './channels.ts';
import { createSimulatedDevice, type SimulatedDevice } from './device.ts';
import { DeviceSimConfigError } from './errors.ts';
import type { SimulatedDeviceOptions } from './options.ts';

export const DEFAULT_START_CONCURRENCY = 50;

export interface DeviceFleetOptions extends Omit<SimulatedDeviceOptions, 'deviceId' | 'channelIds' | 'localPort'> {
  count: number;
  /** Id of the first device; the others follow by serial (digits 15-20). */
  firstDeviceId: string;
  /** Devices starting (binding + first REGISTER) at the same time. Default 50. */
  startConcurrency?: number;
}

export interface DeviceFleet {
  readonly devices: readonly SimulatedDevice[];
  /** Devices currently registered. */
  registeredCount(): number;
  start(): Promise<void>;
  /** Idempotent: closes every device (each unregisters). */
  close(): Promise<void>;
}

export function createDeviceFleet(opts: DeviceFleetOptions): DeviceFleet {
  const { count, firstDeviceId, startConcurrency = DEFAULT_START_CONCURRENCY, ...shared } = opts;
  const issues: string[] = [];
  if (!Number.isInteger(count) || count < 1) issues.push(`count: must be a positive integer, got ${count}`);
  if (!Number.isInteger(startConcurrency) || startConcurrency < 1) issues.push(`startConcurrency: must be a positive integer, got ${startConcurrency}`);
  if (Number(firstDeviceId.slice(-6)) + count - 1 > 999_999) issues.push('count: device serials (digits 15-20) would overflow 999999');
  if (issues.length > 0) throw new DeviceSimConfigError(issues);
  const devices = Array.from({ length: count }, (_, i) => createSimulatedDevice({ ...shared, deviceId: deviceIdAt(firstDeviceId, i) }));
  let closing: Promise<void> | undefined;

  return {
    devices,
    registeredCount: () => devices.filter((d) => d.registered).length,
    async start() {
      let next = 0;
      const worker = async (): Promise<void> => {
        while (closing === undefined && next < devices.length) await (devices[next++] as SimulatedDevice).start();
      };
      await Promise.all(Array.from({ length: Math.min(startConcurrency, devices.length) }, worker));
    },
    close() {
      closing ??= Promise.all(devices.map((d) => d.close())).then(() => undefined);
      return closing;
    },
  };
}
