/**
 * One entry point from a parsed body to its typed command, keyed by `<root>/<CmdType>`. Anything the
 * package has no typed decoder for (vendor CmdTypes, 2022 additions not modelled yet) comes back as
 * `generic` with the parsed message: an unknown command is data, not an error.
 */
import { parseManscdp, type ManscdpMessage, type ParseOptions } from '../manscdp.ts';
import { decodeAlarmNotify, type AlarmNotify } from './alarm.ts';
import { decodeBroadcastNotify, type BroadcastNotify } from './broadcast.ts';
import { decodeCatalogNotify, decodeCatalogQuery, decodeCatalogResponse, type CatalogNotify, type CatalogQuery, type CatalogResponse } from './catalog.ts';
import { decodeResultResponse, type ResultResponse } from './common.ts';
import { decodeConfigDownloadQuery, decodeConfigDownloadResponse, type ConfigDownloadQuery, type ConfigDownloadResponse } from './config-download.ts';
import { decodeDeviceConfig, type DeviceConfig } from './device-config.ts';
import { decodeDeviceControl, type DeviceControl } from './device-control.ts';
import { decodeDeviceInfoQuery, decodeDeviceInfoResponse, type DeviceInfoQuery, type DeviceInfoResponse } from './device-info.ts';
import { decodeDeviceStatusQuery, decodeDeviceStatusResponse, type DeviceStatusQuery, type DeviceStatusResponse } from './device-status.ts';
import { decodeKeepalive, type Keepalive } from './keepalive.ts';
import { decodeMediaStatusNotify, type MediaStatusNotify } from './media-status.ts';
import { decodeMobilePositionNotify, decodeMobilePositionQuery, type MobilePositionNotify, type MobilePositionQuery } from './mobile-position.ts';
import { decodePresetQuery, decodePresetQueryResponse, type PresetQuery, type PresetQueryResponse } from './preset-query.ts';
import { decodeDeviceUpgradeResult, decodeUploadSnapShotFinished, type DeviceUpgradeResult, type UploadSnapShotFinished } from './queries-2022.ts';
import { decodeRecordInfoQuery, decodeRecordInfoResponse, type RecordInfoQuery, type RecordInfoResponse } from './record-info.ts';

export interface ManscdpCommandBodies {
  'Notify/Keepalive': Keepalive;
  'Query/Catalog': CatalogQuery;
  'Response/Catalog': CatalogResponse;
  'Notify/Catalog': CatalogNotify;
  'Query/DeviceInfo': DeviceInfoQuery;
  'Response/DeviceInfo': DeviceInfoResponse;
  'Query/DeviceStatus': DeviceStatusQuery;
  'Response/DeviceStatus': DeviceStatusResponse;
  'Query/RecordInfo': RecordInfoQuery;
  'Response/RecordInfo': RecordInfoResponse;
  'Control/DeviceControl': DeviceControl;
  'Response/DeviceControl': ResultResponse;
  'Notify/Alarm': AlarmNotify;
  'Response/Alarm': ResultResponse;
  'Query/MobilePosition': MobilePositionQuery;
  'Notify/MobilePosition': MobilePositionNotify;
  'Notify/MediaStatus': MediaStatusNotify;
  'Query/ConfigDownload': ConfigDownloadQuery;
  'Response/ConfigDownload': ConfigDownloadResponse;
  'Query/PresetQuery': PresetQuery;
  'Response/PresetQuery': PresetQueryResponse;
  'Notify/Broadcast': BroadcastNotify;
  'Response/Broadcast': ResultResponse;
  'Control/DeviceConfig': DeviceConfig;
  'Response/DeviceConfig': ResultResponse;
  'Notify/UploadSnapShotFinished': UploadSnapShotFinished;
  'Notify/DeviceUpgradeResult': DeviceUpgradeResult;
}

export type ManscdpCommandKind = keyof ManscdpCommandBodies;

export type ManscdpCommand =
  | { [K in ManscdpCommandKind]: { kind: K; body: ManscdpCommandBodies[K] } }[ManscdpCommandKind]
  | { kind: 'generic'; body: ManscdpMessage };

const DECODERS: { [K in ManscdpCommandKind]: (msg: ManscdpMessage) => ManscdpCommandBodies[K] } = {
  'Notify/Keepalive': decodeKeepalive,
  'Query/Catalog': decodeCatalogQuery,
  'Response/Catalog': decodeCatalogResponse,
  'Notify/Catalog': decodeCatalogNotify,
  'Query/DeviceInfo': decodeDeviceInfoQuery,
  'Response/DeviceInfo': decodeDeviceInfoResponse,
  'Query/DeviceStatus': decodeDeviceStatusQuery,
  'Response/DeviceStatus': decodeDeviceStatusResponse,
  'Query/RecordInfo': decodeRecordInfoQuery,
  'Response/RecordInfo': decodeRecordInfoResponse,
  'Control/DeviceControl': decodeDeviceControl,
  'Response/DeviceControl': (msg) => decodeResultResponse(msg, 'DeviceControl'),
  'Notify/Alarm': decodeAlarmNotify,
  'Response/Alarm': (msg) => decodeResultResponse(msg, 'Alarm'),
  'Query/MobilePosition': decodeMobilePositionQuery,
  'Notify/MobilePosition': decodeMobilePositionNotify,
  'Notify/MediaStatus': decodeMediaStatusNotify,
  'Query/ConfigDownload': decodeConfigDownloadQuery,
  'Response/ConfigDownload': decodeConfigDownloadResponse,
  'Query/PresetQuery': decodePresetQuery,
  'Response/PresetQuery': decodePresetQueryResponse,
  'Notify/Broadcast': decodeBroadcastNotify,
  'Response/Broadcast': (msg) => decodeResultResponse(msg, 'Broadcast'),
  'Control/DeviceConfig': decodeDeviceConfig,
  'Response/DeviceConfig': (msg) => decodeResultResponse(msg, 'DeviceConfig'),
  'Notify/UploadSnapShotFinished': decodeUploadSnapShotFinished,
  'Notify/DeviceUpgradeResult': decodeDeviceUpgradeResult,
};

export function decodeManscdpCommand(msg: ManscdpMessage): ManscdpCommand {
  const kind = `${msg.root}/${msg.cmdType}`;
  if (!Object.hasOwn(DECODERS, kind)) return { kind: 'generic', body: msg };
  const k = kind as ManscdpCommandKind;
  return { kind: k, body: DECODERS[k](msg) } as ManscdpCommand;
}

/** parseManscdp + decodeManscdpCommand. */
export function parseManscdpCommand(body: Uint8Array | string, opts?: ParseOptions): ManscdpCommand {
  return decodeManscdpCommand(parseManscdp(body, opts));
}
