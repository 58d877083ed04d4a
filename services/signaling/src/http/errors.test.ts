// Pins the one error → envelope table (STYLE 2). Changing a code here is an API change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as E from '../errors/catalog.ts';
import { ok } from './envelope.ts';
import { ENVELOPE_BY_ERROR, errorResponse, toVmsError } from './errors.ts';

describe('error → envelope table', () => {
  it('maps every catalog code exactly as pinned', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(ENVELOPE_BY_ERROR).map(([k, v]) => [k, [v.httpStatus, v.code]])),
      {
        VMS_ERR_BAD_PARAMETER: [400, 400],
        VMS_ERR_UNAUTHORIZED: [401, 401],
        VMS_ERR_TENANT_FORBIDDEN: [403, 403],
        VMS_ERR_ROLE_FORBIDDEN: [403, 403],
        VMS_ERR_ROUTE_NOT_FOUND: [404, 404],
        VMS_ERR_DEVICE_NOT_FOUND: [404, 404],
        VMS_ERR_CHANNEL_NOT_FOUND: [404, 404],
        VMS_ERR_RECORD_QUERY_NOT_FOUND: [404, 404],
        VMS_ERR_PLATFORM_NOT_FOUND: [404, 404],
        VMS_ERR_DEVICE_OFFLINE: [200, 4601],
        VMS_ERR_FORWARDING_DISABLED: [200, 4602],
        VMS_ERR_OWNER_NODE_OFFLINE: [200, 4603],
        VMS_ERR_OWNER_UNREACHABLE: [200, 4604],
        VMS_ERR_FORGED_FORWARD: [403, 4605],
        VMS_ERR_DEVICE_TIMEOUT: [200, 4606],
        VMS_ERR_DEVICE_REJECTED: [200, 4607],
        VMS_ERR_CONTROL_UNAVAILABLE: [200, 4608],
        VMS_ERR_MEDIA_SESSION_NOT_FOUND: [404, 404],
        VMS_ERR_MEDIA_FAILED: [200, 4609],
        VMS_ERR_GB_VERSION_UNSUPPORTED: [200, 4610],
        VMS_ERR_UPLOAD_NOT_FOUND: [404, 404],
        VMS_ERR_STORAGE_FAILED: [503, 503],
        VMS_ERR_BODY_TOO_LARGE: [413, 413],
        VMS_ERR_RATE_LIMITED: [429, 429],
        VMS_ERR_CHANNEL_LIMIT: [409, 409],
        VMS_ERR_SHUTTING_DOWN: [503, 503],
        VMS_ERR_NOT_READY: [503, 503],
        VMS_ERR_CONFIG_INVALID: [500, 500],
        VMS_ERR_INTERNAL: [500, 500],
      },
    );
    assert.deepEqual(Object.keys(ENVELOPE_BY_ERROR).sort(), Object.values(E.ErrorCodes).sort());
  });

  it('builds SPEC §12 envelopes for the routing failures', () => {
    const cases: [E.VmsError, number, number][] = [
      [new E.DeviceOfflineError('34020000001320000001'), 200, 4601],
      [new E.ForwardingDisabledError('34020000001320000001', 'node-b'), 200, 4602],
      [new E.OwnerNodeOfflineError('34020000001320000001', 'node-b'), 200, 4603],
      [new E.OwnerUnreachableError('node-b', 'connect'), 200, 4604],
      [new E.ForgedForwardError(), 403, 4605],
      [new E.UnauthorizedError('expired'), 401, 401],
      [new E.TenantForbiddenError('34020000001320000001'), 403, 403],
      [new E.BadParameterError('channelId', 'must be a 20-digit code'), 400, 400],
      [new E.DeviceNotFoundError('34020000001320000001'), 404, 404],
      [new E.PlatformNotFoundError('34010000002000000001'), 404, 404],
    ];
    for (const [err, status, code] of cases) {
      const r = errorResponse(err);
      assert.equal(r.httpStatus, status, err.code);
      assert.deepEqual(r.body, { code, success: false, msg: err.message, data: null });
      // SPEC SEC-2: node names are infrastructure; a tenant's answers never carry them
      assert.doesNotMatch(r.body.msg, /node-b/, err.code);
    }
    // one answer for another tenant's resource and a missing one: the message cannot tell them apart
    assert.equal(new E.TenantForbiddenError('34020000001320000001').message, new E.TenantForbiddenError('34020000001320000009').message);
    assert.deepEqual(ok({ a: 1 }), { code: 200, success: true, msg: 'ok', data: { a: 1 } });
  });

  it('turns foreign errors into catalog errors without leaking their text', () => {
    const internal = toVmsError(new TypeError('secret detail'));
    assert.ok(internal instanceof E.InternalError);
    assert.equal(errorResponse(internal).body.msg, 'internal error');
    const tooLarge = toVmsError(Object.assign(new Error('Body is too large'), { statusCode: 413 }));
    assert.ok(tooLarge instanceof E.BodyTooLargeError); // SPEC SEC-3: 413, not a bad parameter
    const client = toVmsError(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }));
    assert.ok(client instanceof E.BadParameterError);
  });
});
