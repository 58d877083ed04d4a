// Bodies and path parameters of the upstream platform administration (routes/platforms.ts, SPEC
// CASC-2). The schema checks shapes and types; @vms/cascade's validateUpstreamPlatform still checks
// every field's value and reports all problems at once. Unknown fields are ignored, as the handler does.
import { PLATFORM_LIMITS } from '@vms/cascade';
import { GB_ID_PATTERN, gbIdParam, type JsonSchema } from './common.ts';
import { TENANT_ID_PATTERN } from './patterns.ts';

const between = (key: keyof typeof PLATFORM_LIMITS, description: string): JsonSchema => ({
  type: 'integer',
  minimum: PLATFORM_LIMITS[key].min,
  maximum: PLATFORM_LIMITS[key].max,
  description,
});

const PLATFORM_FIELDS: Readonly<Record<string, JsonSchema>> = {
  serverId: gbIdParam('the upstream platform’s SIP id'),
  tenantId: { type: 'string', pattern: TENANT_ID_PATTERN, description: 'owning tenant (SPEC SEC-2), text; default the caller’s; another tenant only with the operator role' },
  name: { type: 'string', maxLength: 255 },
  domain: { type: 'string', maxLength: 64, description: 'SIP domain (digest realm); default the first 10 digits of serverId' },
  host: { type: 'string', minLength: 1, maxLength: 255 },
  port: { type: 'integer', minimum: 1, maximum: 65_535, description: 'default 5060' },
  transport: { type: 'string', enum: ['udp', 'tcp'], description: 'default udp' },
  password: { type: 'string', maxLength: 255, description: 'digest password; never echoed (masked ******)' },
  registerExpiresS: between('registerExpiresS', 'REGISTER Expires, seconds'),
  keepaliveIntervalS: between('keepaliveIntervalS', 'keepalive period, seconds'),
  maxKeepaliveFailures: between('maxKeepaliveFailures', 'failed keepalives before re-registering'),
  enabled: { type: 'boolean' },
  charset: { type: 'string', enum: ['GB2312', 'UTF-8'] },
  localId: gbIdParam('the id presented upstream (default this platform’s server id)'),
  catalog: {
    type: 'object',
    properties: {
      groupId: { type: ['string', 'null'], pattern: GB_ID_PATTERN, description: 'virtual organisation above the shared channels' },
      groupName: { type: ['string', 'null'], maxLength: 255 },
    },
  },
};

export const PLATFORM_BODY: JsonSchema = { type: 'object', properties: PLATFORM_FIELDS, required: ['serverId', 'host'] };

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
