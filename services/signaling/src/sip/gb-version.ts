// Which revision of GB/T 28181 a device speaks, decided once per REGISTER. GB/T 28181-2022 §9.1.2.1
// has devices announce it in the `X-GB-ver` header of REGISTER: 1.0 = 2011, 2.0 = 2016, 3.0 = 2022
// (minor versions 3.x read as 2022). A device that sends nothing is taken for a 2016 one, unless the
// operator lists it (`vms.gb28181.sip.gb2022-devices`, ids or id prefixes). Commands only the 2022
// text defines are refused up front for the others (4610) instead of waiting for an answer that
// never comes.

export type GbVersion = '2016' | '2022';

/** The header GB/T 28181-2022 §9.1.2.1 adds to REGISTER. */
export const GB_VERSION_HEADER = 'X-GB-ver';

export function gbVersionOf(header: string | undefined, deviceId: string, configured: readonly string[]): GbVersion {
  if (configured.some((prefix) => deviceId.startsWith(prefix))) return '2022';
  const major = /^\s*(\d{1,3})(?:\.\d{1,3})?\s*$/.exec(header ?? '')?.[1];
  return major !== undefined && Number(major) >= 3 ? '2022' : '2016';
}
