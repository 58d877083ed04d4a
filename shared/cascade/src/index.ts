// @vms/cascade: this platform as a lower platform of upstream GB28181 platforms (SPEC §6): platform
// records and channel sharing (memory / MySQL), registration + keepalive on @vms/sip, answers to the
// upstream's queries, NOTIFY bodies and subscription bookkeeping. Must not import @vms/cluster
// (STYLE §5): the signaling service wires leadership and the cascade event bus to these pieces.
export { CASCADE_ERROR_INFO, CascadeError, CascadeSendError, isCascadeError, type CascadeErrorCode } from './errors.ts';

export {
  DEFAULT_TENANT_ID,
  UPSTREAM_PLATFORM_DEFAULTS,
  domainOf,
  type CatalogGroupOptions,
  type ChannelKey,
  type ChannelShare,
  type SharedChannel,
  type UpstreamCharset,
  type UpstreamPlatform,
  type UpstreamTransport,
} from './platform/platform.ts';
export {
  PLATFORM_LIMITS,
  TENANT_ID_RE,
  isPlatformHost,
  upstreamPlatform,
  validateSharedChannel,
  validateUpstreamPlatform,
  type UpstreamPlatformInput,
} from './platform/platform.validate.ts';
export type { PlatformRepository } from './platform/platform-repository.port.ts';
export { createMemoryPlatformRepository } from './platform/platform-repository.memory.ts';
export { createMysqlPlatformRepository } from './platform/platform-repository.mysql.ts';
export { platformFromRow, platformRowValues, PLATFORM_COLUMNS, sharedChannelFromRow, type PlatformRow, type SharedChannelRow } from './platform/platform-row.ts';

export {
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_RETRY_MAX_MS,
  REFRESH_MARGIN_S,
  initialRegistration,
  refreshDelayMs,
  retryDelayMs,
  stepRegistration,
  type RegistrationEffect,
  type RegistrationEvent,
  type RegistrationInput,
  type RegistrationPhase,
  type RegistrationPolicy,
  type RegistrationState,
  type RegistrationStep,
  type RegistrationTimer,
} from './registration/registration-machine.ts';
export {
  UpstreamRegistration,
  grantedExpires,
  type UpstreamRegistrationOptions,
  type UpstreamSipClient,
} from './registration/upstream-registration.ts';
export {
  MANSCDP_CONTENT_TYPE,
  keepaliveRequest,
  localAddress,
  registerRequest,
  upstreamAuth,
  upstreamMessage,
  upstreamTarget,
  upstreamUri,
  type RegisterIds,
} from './registration/upstream-requests.ts';

export {
  buildCatalogAnswer,
  catalogGroupItem,
  catalogItemsForPlatform,
  placeChannel,
  type CatalogAnswerOptions,
} from './answers/catalog-answer.ts';
export { DEFAULT_PAGE_INTERVAL_MS, sendCatalogPages, type SendPagesOptions, type SendPagesResult } from './answers/send-pages.ts';
export {
  DEFAULT_UTC_OFFSET_MINUTES,
  platformDeviceInfoAnswer,
  platformDeviceStatusAnswer,
  routeUpstreamMessage,
  type PlatformIdentity,
  type UpstreamMessageRoute,
} from './answers/platform-answers.ts';
export { alarmNotifyBody, catalogNotifyBody, mobilePositionNotifyBody } from './answers/notify-bodies.ts';
export { RELAYED_QUERY_TYPES, relayedResponseBody } from './answers/relayed-response.ts';

export {
  PS_PAYLOAD_TYPE,
  buildUpstreamAnswer,
  readUpstreamOffer,
  type UpstreamAnswerParams,
  type UpstreamMediaTransport,
  type UpstreamOffer,
} from './live/upstream-offer.ts';

export {
  SubscriptionTable,
  subscriptionKindOf,
  type SubscribeOutcome,
  type SubscribeRequest,
  type SubscriptionEntry,
  type SubscriptionKind,
  type SubscriptionTableOptions,
} from './subscriptions/subscription-table.ts';
