import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ForwardConnectError, ForwardResponseError, ForwardTimeoutError, StoreClosedError } from '@vms/cluster';
import { errorResponse } from '../http/errors.ts';
import { FORWARD_FAILURES, classifyForwardFailure, type ForwardFailureKind } from './forward-failures.ts';

describe('forward failure mapping (ROUTE-5, SPEC §12)', () => {
  it('pins each forward failure to its envelope: HTTP 200, 4603 or 4604, never a 5xx', () => {
    const expected: Record<ForwardFailureKind, number> = {
      'connect-refused': 4603,
      'connect-timeout': 4604,
      'connect-unreachable': 4604,
      'read-timeout': 4604,
      'exchange-broken': 4604,
      'client-closed': 4604,
      unexpected: 4604,
    };
    for (const [kind, code] of Object.entries(expected) as [ForwardFailureKind, number][]) {
      const { httpStatus, body } = errorResponse(FORWARD_FAILURES[kind]('34020000001320000001', 'node-b', null));
      assert.deepEqual([kind, httpStatus, body.code, body.success], [kind, 200, code, false]);
    }
    assert.equal(Object.keys(FORWARD_FAILURES).length, Object.keys(expected).length);
  });

  it('classifies the forward client errors by class and reason', () => {
    assert.equal(classifyForwardFailure(new ForwardConnectError('b', 'refused')), 'connect-refused');
    assert.equal(classifyForwardFailure(new ForwardConnectError('b', 'timeout')), 'connect-timeout');
    assert.equal(classifyForwardFailure(new ForwardConnectError('b', 'unreachable')), 'connect-unreachable');
    assert.equal(classifyForwardFailure(new ForwardTimeoutError('b', 'body', 5)), 'read-timeout');
    assert.equal(classifyForwardFailure(new ForwardResponseError('b')), 'exchange-broken');
    assert.equal(classifyForwardFailure(new StoreClosedError('closed')), 'client-closed');
    assert.equal(classifyForwardFailure(new Error('ECONNREFUSED')), 'unexpected');
  });

  it('the owner node is carried for the log, never in the message a caller reads (SPEC SEC-2)', () => {
    for (const kind of ['connect-refused', 'read-timeout'] as const) {
      const err = FORWARD_FAILURES[kind]('34020000001320000001', 'node-b', null);
      assert.doesNotMatch(err.message, /node-b/);
      assert.equal((err as unknown as { ownerNode: string }).ownerNode, 'node-b');
    }
  });
});
