/**
 * A device's Response to an upstream's query, sent on by the leader (GB/T 28181-2016 §9.5: the Response goes
 * back to the asker). The owner decoded it and put the upstream's SN in; here it is encoded again in the
 * upstream's charset, whatever charset the device spoke. Pure.
 */
import {
  buildCatalogResponse,
  buildConfigDownloadResponse,
  buildDeviceInfoResponse,
  buildDeviceStatusResponse,
  buildPresetQueryResponse,
  buildRecordInfoResponse,
  type BuildOptions,
  type CatalogResponse,
  type ConfigDownloadResponse,
  type DeviceInfoResponse,
  type DeviceStatusResponse,
  type PresetQueryResponse,
  type RecordInfoResponse,
} from '@vms/gb28181';
import type { UpstreamPlatform } from '../platform/platform.ts';

type Builder = (response: never, opts: BuildOptions) => Buffer;

const BUILDERS = {
  Catalog: (r: CatalogResponse, o) => buildCatalogResponse(r, o),
  DeviceInfo: (r: DeviceInfoResponse, o) => buildDeviceInfoResponse(r, o),
  DeviceStatus: (r: DeviceStatusResponse, o) => buildDeviceStatusResponse(r, o),
  RecordInfo: (r: RecordInfoResponse, o) => buildRecordInfoResponse(r, o),
  PresetQuery: (r: PresetQueryResponse, o) => buildPresetQueryResponse(r, o),
  ConfigDownload: (r: ConfigDownloadResponse, o) => buildConfigDownloadResponse(r, o),
} satisfies Record<string, (r: never, o: BuildOptions) => Buffer>;

/** The CmdTypes whose Responses are relayed to upstreams (the queries the codecs decode). */
export const RELAYED_QUERY_TYPES: readonly string[] = Object.keys(BUILDERS);

/** The MESSAGE body for `p`; undefined for a CmdType that is not relayed. Throws GB_ERR_* on a malformed body. */
export function relayedResponseBody(p: UpstreamPlatform, cmdType: string, response: object): Buffer | undefined {
  const build = (BUILDERS as Record<string, Builder>)[cmdType];
  return build === undefined ? undefined : build(response as never, { charset: p.charset });
}
