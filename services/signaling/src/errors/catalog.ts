// The signaling service's one error catalog. Every failure the service reports is one of these
// classes; each carries a stable string code. Callers branch on `code` (or `instanceof`), never on
// `message`. The single mapping of codes to the API envelope lives in `http/errors.ts`.

export const ErrorCodes = {
  CONFIG_INVALID: 'VMS_ERR_CONFIG_INVALID',
  BAD_PARAMETER: 'VMS_ERR_BAD_PARAMETER',
  UNAUTHORIZED: 'VMS_ERR_UNAUTHORIZED',
  TENANT_FORBIDDEN: 'VMS_ERR_TENANT_FORBIDDEN',
  ROLE_FORBIDDEN: 'VMS_ERR_ROLE_FORBIDDEN',
  ROUTE_NOT_FOUND: 'VMS_ERR_ROUTE_NOT_FOUND',
  DEVICE_NOT_FOUND: 'VMS_ERR_DEVICE_NOT_FOUND',
  CHANNEL_NOT_FOUND: 'VMS_ERR_CHANNEL_NOT_FOUND',
  RECORD_QUERY_NOT_FOUND: 'VMS_ERR_RECORD_QUERY_NOT_FOUND',
  PLATFORM_NOT_FOUND: 'VMS_ERR_PLATFORM_NOT_FOUND',
  DEVICE_OFFLINE: 'VMS_ERR_DEVICE_OFFLINE',
  FORWARDING_DISABLED: 'VMS_ERR_FORWARDING_DISABLED',
  OWNER_NODE_OFFLINE: 'VMS_ERR_OWNER_NODE_OFFLINE',
  OWNER_UNREACHABLE: 'VMS_ERR_OWNER_UNREACHABLE',
  FORGED_FORWARD: 'VMS_ERR_FORGED_FORWARD',
  DEVICE_TIMEOUT: 'VMS_ERR_DEVICE_TIMEOUT',
  DEVICE_REJECTED: 'VMS_ERR_DEVICE_REJECTED',
  CONTROL_UNAVAILABLE: 'VMS_ERR_CONTROL_UNAVAILABLE',
  MEDIA_SESSION_NOT_FOUND: 'VMS_ERR_MEDIA_SESSION_NOT_FOUND',
  MEDIA_FAILED: 'VMS_ERR_MEDIA_FAILED',
  GB_VERSION_UNSUPPORTED: 'VMS_ERR_GB_VERSION_UNSUPPORTED',
  UPLOAD_NOT_FOUND: 'VMS_ERR_UPLOAD_NOT_FOUND',
  STORAGE_FAILED: 'VMS_ERR_STORAGE_FAILED',
  BODY_TOO_LARGE: 'VMS_ERR_BODY_TOO_LARGE',
  RATE_LIMITED: 'VMS_ERR_RATE_LIMITED',
  CHANNEL_LIMIT: 'VMS_ERR_CHANNEL_LIMIT',
  SHUTTING_DOWN: 'VMS_ERR_SHUTTING_DOWN',
  NOT_READY: 'VMS_ERR_NOT_READY',
  INTERNAL: 'VMS_ERR_INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export abstract class VmsError extends Error {
  abstract readonly code: ErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ConfigIssue {
  /** Dotted key path as written in YAML, e.g. `vms.gb28181.sip.port`. */
  readonly key: string;
  /** The environment variable that sets the same key, e.g. `VMS_GB28181_SIP_PORT` (none for CLI flags). */
  readonly env: string | null;
  readonly problem: string;
}

export class ConfigError extends VmsError {
  readonly code = ErrorCodes.CONFIG_INVALID;
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(
      `invalid configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n` +
        issues.map((i) => `  - ${i.key}${i.env === null ? '' : ` (${i.env})`}: ${i.problem}`).join('\n'),
    );
  }
}

export class BadParameterError extends VmsError {
  readonly code = ErrorCodes.BAD_PARAMETER;
  constructor(
    readonly parameter: string,
    readonly problem: string,
  ) {
    super(`bad parameter ${parameter}: ${problem}`);
  }
}

export class UnauthorizedError extends VmsError {
  readonly code = ErrorCodes.UNAUTHORIZED;
  constructor(readonly reason: 'missing' | 'invalid' | 'expired') {
    super(reason === 'missing' ? 'missing auth token' : `${reason} auth token`);
  }
}

/**
 * SPEC SEC-2: the resource is not the caller's tenant's. A tenant token gets exactly this answer for
 * another tenant's device and for one that does not exist (no existence oracle), so the message never
 * says which; `resource` (the id asked for) is for the log only.
 */
export class TenantForbiddenError extends VmsError {
  readonly code = ErrorCodes.TENANT_FORBIDDEN;
  constructor(readonly resource: string) {
    super('not found or not this tenant\'s');
  }
}

/** SPEC SEC-2: an endpoint for the all-tenant operator role (its explicit `role` claim) only. */
export class RoleForbiddenError extends VmsError {
  readonly code = ErrorCodes.ROLE_FORBIDDEN;
  constructor(readonly what: string) {
    super(`${what} requires the operator role`);
  }
}

export class RouteNotFoundError extends VmsError {
  readonly code = ErrorCodes.ROUTE_NOT_FOUND;
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(`no such endpoint: ${method} ${path}`);
  }
}

export class DeviceNotFoundError extends VmsError {
  readonly code = ErrorCodes.DEVICE_NOT_FOUND;
  constructor(readonly deviceId: string) {
    super(`unknown device ${deviceId}`);
  }
}

export class ChannelNotFoundError extends VmsError {
  readonly code = ErrorCodes.CHANNEL_NOT_FOUND;
  constructor(readonly channelId: string) {
    super(`unknown channel ${channelId}`);
  }
}

export class RecordQueryNotFoundError extends VmsError {
  readonly code = ErrorCodes.RECORD_QUERY_NOT_FOUND;
  constructor(readonly sn: string) {
    super(`unknown or expired record query ${sn}`);
  }
}

/** An upstream platform (`/vms/platforms/{serverId}`) that is not in the platform store. */
export class PlatformNotFoundError extends VmsError {
  readonly code = ErrorCodes.PLATFORM_NOT_FOUND;
  constructor(readonly serverId: string) {
    super(`unknown upstream platform ${serverId}`);
  }
}

/** SPEC §12 4601: the device is offline / has no owner (ROUTE-2). */
export class DeviceOfflineError extends VmsError {
  readonly code = ErrorCodes.DEVICE_OFFLINE;
  constructor(readonly deviceId: string) {
    super(`device ${deviceId} is offline`);
  }
}

/** SPEC §12 4602: the device is owned elsewhere and no forward secret is configured (ROUTE-6). */
export class ForwardingDisabledError extends VmsError {
  readonly code = ErrorCodes.FORWARDING_DISABLED;
  constructor(
    readonly deviceId: string,
    readonly ownerNode: string,
  ) {
    super(`device ${deviceId} is owned by another node and forwarding is disabled (no node-forward-secret)`);
  }
}

/** SPEC §12 4603: the owner's node is not online in the node table (ROUTE-5). */
export class OwnerNodeOfflineError extends VmsError {
  readonly code = ErrorCodes.OWNER_NODE_OFFLINE;
  constructor(
    readonly deviceId: string,
    readonly ownerNode: string,
  ) {
    super(`the owner node of device ${deviceId} is offline`);
  }
}

/** SPEC §12 4604: the owner timed out or could not be reached (ROUTE-5). */
export class OwnerUnreachableError extends VmsError {
  readonly code = ErrorCodes.OWNER_UNREACHABLE;
  constructor(
    readonly ownerNode: string,
    readonly phase: 'connect' | 'response',
    options?: { cause?: unknown },
  ) {
    super(`the owner node did not answer (${phase})`, options);
  }
}

/** SPEC §12 4605: a request claimed to be forwarded without the right secret (ROUTE-3, ROUTE-6). */
export class ForgedForwardError extends VmsError {
  readonly code = ErrorCodes.FORGED_FORWARD;
  constructor() {
    super('forwarded request refused');
  }
}

/**
 * The device did not answer a live query/command in time. `request`: no SIP final response to our
 * MESSAGE (transaction timeout); `response`: the MESSAGE was accepted but the MANSCDP Response (matched
 * by SN) did not arrive in time.
 */
export class DeviceTimeoutError extends VmsError {
  readonly code = ErrorCodes.DEVICE_TIMEOUT;
  constructor(
    readonly deviceId: string,
    readonly operation: string,
    readonly phase: 'request' | 'response' = 'response',
  ) {
    super(`device ${deviceId} did not ${phase === 'request' ? 'acknowledge' : 'answer'} ${operation} in time`);
  }
}

/** The device answered a live query/command with an error (SIP error status or Result=ERROR). */
export class DeviceRejectedError extends VmsError {
  readonly code = ErrorCodes.DEVICE_REJECTED;
  constructor(
    readonly deviceId: string,
    readonly operation: string,
    readonly reason: string,
  ) {
    super(`device ${deviceId} rejected ${operation}: ${reason}`);
  }
}

/** Live device control is not wired on this instance (no SIP stack yet). */
export class ControlUnavailableError extends VmsError {
  readonly code = ErrorCodes.CONTROL_UNAVAILABLE;
  constructor(readonly operation: string) {
    super(`live device control is not available on this instance (${operation})`);
  }
}

/** A play / playback / download session id that is unknown here or already ended. */
export class MediaSessionNotFoundError extends VmsError {
  readonly code = ErrorCodes.MEDIA_SESSION_NOT_FOUND;
  constructor(readonly sessionId: string) {
    super(`unknown or ended media session ${sessionId}`);
  }
}

/** The media plane failed a stream: no usable media node, a ZLM API call failed, no SSRC left. */
export class MediaFailedError extends VmsError {
  readonly code = ErrorCodes.MEDIA_FAILED;
  constructor(
    readonly operation: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`media ${operation} failed: ${reason}`, options);
  }
}

/** A GB/T 28181-2022 command for a device that registered as a 2016 (or older) one (sip/gb-version.ts). */
export class GbVersionUnsupportedError extends VmsError {
  readonly code = ErrorCodes.GB_VERSION_UNSUPPORTED;
  constructor(
    readonly deviceId: string,
    readonly operation: string,
    readonly deviceVersion: string,
  ) {
    super(`device ${deviceId} speaks GB/T 28181-${deviceVersion}; ${operation} needs GB/T 28181-2022`);
  }
}

/** A snapshot upload naming no request this instance is waiting pictures for (unknown, expired or full). */
export class UploadNotFoundError extends VmsError {
  readonly code = ErrorCodes.UPLOAD_NOT_FOUND;
  constructor() {
    super('no snapshot request waits for this upload');
  }
}

export class StorageError extends VmsError {
  readonly code = ErrorCodes.STORAGE_FAILED;
  constructor(
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`storage operation failed: ${operation}`, options);
  }
}

/** SPEC SEC-3: a request body over the limit (HTTP 413; fastify's FST_ERR_CTP_BODY_TOO_LARGE). */
export class BodyTooLargeError extends VmsError {
  readonly code = ErrorCodes.BODY_TOO_LARGE;
  constructor(options?: { cause?: unknown }) {
    super('request body too large', options);
  }
}

/** SPEC SEC-3: a device sends more messages than its per-device rate allows (SIP 503 + Retry-After). */
export class RateLimitedError extends VmsError {
  readonly code = ErrorCodes.RATE_LIMITED;
  constructor(readonly deviceId: string) {
    super(`device ${deviceId} sends messages faster than its rate limit`);
  }
}

/** SPEC SEC-3: storing the channels would take a device over its channel cap; nothing was stored. */
export class ChannelLimitError extends VmsError {
  readonly code = ErrorCodes.CHANNEL_LIMIT;
  constructor(
    readonly deviceId: string,
    readonly limit: number,
  ) {
    super(`device ${deviceId} would exceed its limit of ${limit} channels`);
  }
}

export class ShuttingDownError extends VmsError {
  readonly code = ErrorCodes.SHUTTING_DOWN;
  constructor() {
    super('instance is shutting down');
  }
}

/** Readiness (`/readyz`): still starting, or draining after SIGTERM. */
export class NotReadyError extends VmsError {
  readonly code = ErrorCodes.NOT_READY;
  constructor(readonly phase: 'starting' | 'draining') {
    super(`instance not ready: ${phase}`);
  }
}

export class InternalError extends VmsError {
  readonly code = ErrorCodes.INTERNAL;
  constructor(options?: { cause?: unknown }) {
    super('internal error', options);
  }
}

export const isVmsError = (err: unknown): err is VmsError => err instanceof VmsError;
