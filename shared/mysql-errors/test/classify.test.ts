import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyMysqlError, codeSuffix, POOL_ACQUIRE_TIMEOUT, POOL_QUEUE_FULL } from '../src/index.ts';

describe('classifyMysqlError', () => {
  it('reads the driver code, never the message', () => {
    assert.equal(classifyMysqlError({ code: 'ECONNREFUSED' }), 'unavailable');
    assert.equal(classifyMysqlError({ code: 'ER_LOCK_DEADLOCK', message: 'syntax error' }), 'unavailable');
    assert.equal(classifyMysqlError({ code: 'ER_NO_SUCH_TABLE', message: 'ECONNREFUSED' }), 'query');
    assert.equal(classifyMysqlError({ code: 'ER_NO_REFERENCED_ROW_2' }), 'missing-parent');
  });
  it('a fatal error is unavailable whatever its code; non-objects are query errors', () => {
    assert.equal(classifyMysqlError({ code: 'ER_PARSE_ERROR', fatal: true }), 'unavailable');
    assert.equal(classifyMysqlError('boom'), 'query');
    assert.equal(classifyMysqlError(null), 'query');
  });
  it("a statement timeout and the bounded pool's own refusals are unavailable (retry later)", () => {
    for (const code of ['PROTOCOL_SEQUENCE_TIMEOUT', POOL_ACQUIRE_TIMEOUT, POOL_QUEUE_FULL]) assert.equal(classifyMysqlError({ code }), 'unavailable', code);
  });
  it('formats the code for messages', () => {
    assert.equal(codeSuffix({ code: 'ETIMEDOUT' }), ' (ETIMEDOUT)');
    assert.equal(codeSuffix(new Error('x')), '');
  });
});
