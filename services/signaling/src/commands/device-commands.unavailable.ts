import { ControlUnavailableError } from '../errors/catalog.ts';
import type { DeviceCommandService } from './device-commands.port.ts';

/** Used when the SIP side is replaced (tests): every command fails with ControlUnavailableError (4608). */
export function createUnavailableDeviceCommands(): DeviceCommandService {
  const fail = (operation: string) => async (): Promise<never> => {
    throw new ControlUnavailableError(operation);
  };
  return {
    preset: fail('preset'),
    presets: fail('preset query'),
    cruise: fail('cruise'),
    scan: fail('scan'),
    homePosition: fail('home position'),
    dragZoom: fail('drag zoom'),
    configureBasic: fail('device config'),
    downloadConfig: fail('config download'),
    snapshot: fail('snapshot'),
    snapshots: fail('snapshot list'),
    snapshotPicture: fail('snapshot picture'),
    receiveSnapshot: fail('snapshot upload'),
    upgrade: fail('device upgrade'),
    upgradeState: fail('device upgrade state'),
    sdCardStatus: fail('SD card status'),
    formatSdCard: fail('SD card format'),
    ptzPrecise: fail('precise PTZ'),
    ptzPosition: fail('PTZ position'),
    targetTrack: fail('target tracking'),
    cruiseTracks: fail('cruise track list'),
    cruiseTrack: fail('cruise track'),
    homePositionQuery: fail('home position query'),
  } satisfies DeviceCommandService;
}
