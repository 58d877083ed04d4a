// Bodies and path parameters of the upstream platform administration (routes/platforms.ts, SPEC
// CASC-2). The body fields are described, not enforced: @vms/cascade's validateUpstreamPlatform checks
// every field (types included) and names all the bad ones in one answer (`serverId, host: …`), which a
// schema stopping at the first problem would not. Enforced here: a JSON object, `serverId` present on
// create, the path's serverId. Unknown fields are ignored, as the handler does.
import { PLATFORM_LIMITS } from '@vms/cascade';
import { gbIdParam, type JsonSchema } from './common.ts';

const between = (key: keyof typeof PLATFORM_LIMITS, what: string): JsonSchema => ({
  description: `${what}: integer ${PLATFORM_LIMITS[key].min}-${PLATFORM_LIMITS[key].max}`,
});

const PLATFORM_FIELDS: Readonly<Record<string, JsonSchema>> = {
  serverId: { description: 'the upstream platform’s SIP id: 20 digits (required on create)' },
  tenantId: { description: 'owning tenant (SPEC SEC-2): 1-12 characters of A-Z a-z 0-9 _ -; default the caller’s; another tenant only with the operator role' },
  name: { description: 'label: text of at most 255 characters, no control characters' },
  domain: { description: 'SIP domain (digest realm): 1-64 characters of [A-Za-z0-9.-]; default the first 10 digits of serverId' },
  host: { description: 'required: a literal IP address or a DNS name (no scheme, port, path or spaces; at most 253 characters)' },
  port: { description: 'integer 1-65535, default 5060' },
  transport: { description: 'udp or tcp, default udp' },
  password: { description: 'digest password, at most 255 characters; never echoed (masked ******)' },
  registerExpiresS: between('registerExpiresS', 'REGISTER Expires, seconds'),
  keepaliveIntervalS: between('keepaliveIntervalS', 'keepalive period, seconds'),
  maxKeepaliveFailures: between('maxKeepaliveFailures', 'failed keepalives before re-registering'),
  enabled: { description: 'true or false, default true' },
  charset: { description: 'GB2312 or UTF-8' },
  localId: { description: 'the id presented upstream: 20 digits (default this platform’s server id)' },
  catalog: { description: '{groupId: 20 digits or null (virtual organisation above the shared channels), groupName: text of at most 255 characters or null}' },
};

export const PLATFORM_BODY: JsonSchema = { type: 'object', properties: PLATFORM_FIELDS, required: ['serverId'] };

export const PLATFORM_PATCH_BODY: JsonSchema = { type: 'object', properties: PLATFORM_FIELDS };

export const SERVER_ID_PARAMS: JsonSchema = { type: 'object', properties: { serverId: gbIdParam('upstream platform id') }, required: ['serverId'] };

// Fields described, not enforced: the handler checks every item with @vms/cascade's validateSharedChannel
// and names all the bad fields at once (`deviceId, channelId: …`); a schema would stop at the first.
const SHARED_CHANNEL: JsonSchema = {
  type: 'object',
  properties: {
    deviceId: { description: 'required: 1-20 characters of [A-Za-z0-9_.-]' },
    channelId: { description: 'required: 1-64 characters of [A-Za-z0-9_.-]' },
    catalogGroupId: { description: 'BusinessGroupID at this platform, 20 digits, or null (default the platform’s)' },
    parentId: { description: 'ParentID at this platform, or null' },
  },
};

/** The whole list (at most 10,000 channels), as an array or as `{channels: [...]}`. */
export const PLATFORM_CHANNELS_BODY: JsonSchema = {
  anyOf: [
    { type: 'array', items: SHARED_CHANNEL },
    { type: 'object', required: ['channels'], properties: { channels: { type: 'array', items: SHARED_CHANNEL } } },
  ],
};
