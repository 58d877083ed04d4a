/**
 * 20-digit GB/T 28181 codes (Annex D, "统一编码规则"):
 *
 *   digits 1-8    centre code: province 2, city 2, district 2, grassroots unit 2 (GB/T 2260 based)
 *   digits 9-10   industry code (Table D.2)
 *   digits 11-13  type code (Table D.1)
 *   digit  14     network identifier (0-4 private video network, 5 public-security network,
 *                 6 government network, 7 Internet, 8 social-resource access network, 9 reserved)
 *   digits 15-20  serial number
 *
 * The SIP domain ("realm") of a platform is the first 10 digits of its id. Captures from before the
 * 2016 numbering carry 18-digit ids (Hikvision 2013, sample 03); they are accepted as `legacy`
 * without structure.
 */
import { GbIdError } from './errors.ts';

export const GB_ID_LENGTH = 20;
export const LEGACY_ID_LENGTH = 18;
export const REALM_LENGTH = 10;

/** What a code designates, derived from its type code. */
export type GbIdKind =
  | 'device' // 111-130 front-end main devices (DVR, encoder, NVR...)
  | 'channel' // 131-199 front-end peripherals (camera, IPC, alarm I/O...) - the usual channel types
  | 'platform' // 200-214, 217-299 platform devices (signalling server 200, media server 202...)
  | 'business-group' // 215
  | 'organization' // 216 virtual organisation
  | 'user' // 300-499 centre / terminal users
  | 'external' // 500-599 platform external servers
  | 'extension' // type codes outside the ranges above (600-999 are extension types)
  | 'legacy'; // 18-digit pre-2016 code

export interface GbIdRegion {
  province: string;
  city: string;
  district: string;
  grassroots: string;
  /** All 8 centre-code digits. */
  code: string;
}

export interface GbId {
  id: string;
  kind: GbIdKind;
  legacy: boolean;
  /** Absent for legacy ids. */
  region?: GbIdRegion;
  industry?: string;
  type?: string;
  network?: string;
  serial?: string;
  /** Name of the type code from Table D.1, when it has one. */
  typeName?: string;
}

/** Table D.1 codes with a fixed meaning (ranges in between are reserved for extension). */
export const GB_TYPE_NAMES: Readonly<Record<string, string>> = {
  '111': 'DVR',
  '112': 'video server',
  '113': 'encoder',
  '114': 'decoder',
  '115': 'video switching matrix',
  '116': 'audio switching matrix',
  '117': 'alarm controller',
  '118': 'NVR',
  '131': 'camera',
  '132': 'IPC',
  '133': 'display',
  '134': 'alarm input device',
  '135': 'alarm output device',
  '136': 'voice input device',
  '137': 'voice output device',
  '138': 'mobile transmission device',
  '139': 'other peripheral',
  '200': 'central signalling control server',
  '201': 'web application server',
  '202': 'media distribution server',
  '203': 'proxy server',
  '204': 'security server',
  '205': 'alarm server',
  '206': 'database server',
  '207': 'GIS server',
  '208': 'management server',
  '209': 'access gateway',
  '210': 'media storage server',
  '211': 'signalling security routing gateway',
  '215': 'business group',
  '216': 'virtual organization',
  '300': 'centre user',
  '400': 'terminal user',
};

export function kindOfType(type: number): Exclude<GbIdKind, 'legacy'> {
  if (type >= 111 && type <= 130) return 'device';
  if (type >= 131 && type <= 199) return 'channel';
  if (type === 215) return 'business-group';
  if (type === 216) return 'organization';
  if (type >= 200 && type <= 299) return 'platform';
  if (type >= 300 && type <= 499) return 'user';
  if (type >= 500 && type <= 599) return 'external';
  return 'extension';
}

/** Parses a code; GB_ERR_ID unless it is 20 digits (or 18, legacy). */
export function parseGbId(id: string): GbId {
  if (!/^\d+$/.test(id)) throw new GbIdError('GB id must be decimal digits');
  if (id.length === LEGACY_ID_LENGTH) return { id, kind: 'legacy', legacy: true };
  if (id.length !== GB_ID_LENGTH) throw new GbIdError('GB id must be 20 digits');
  const type = id.slice(10, 13);
  const out: GbId = {
    id,
    kind: kindOfType(Number(type)),
    legacy: false,
    region: { province: id.slice(0, 2), city: id.slice(2, 4), district: id.slice(4, 6), grassroots: id.slice(6, 8), code: id.slice(0, 8) },
    industry: id.slice(8, 10),
    type,
    network: id.slice(13, 14),
    serial: id.slice(14, 20),
  };
  const typeName = GB_TYPE_NAMES[type];
  if (typeName !== undefined) out.typeName = typeName;
  return out;
}

/**
 * Non-throwing check: a 20-digit code (or an 18-digit legacy one when `allowLegacy`). Takes anything:
 * callers validate JSON bodies with it, and RegExp.test would convert a non-string (an object whose
 * `toString` is not a function throws TypeError there).
 */
export function isGbId(id: unknown, allowLegacy = false): boolean {
  return typeof id === 'string' && (/^\d{20}$/.test(id) || (allowLegacy && /^\d{18}$/.test(id)));
}

/** The SIP domain of a platform: centre code + industry code, the first 10 digits of its id (Annex D). */
export function realmOf(serverId: string): string {
  const parsed = parseGbId(serverId);
  return parsed.id.slice(0, REALM_LENGTH);
}
