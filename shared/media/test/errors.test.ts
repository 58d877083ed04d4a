// Pins the error catalog: codes are a public contract (callers and logs branch on them).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MEDIA_ERROR_INFO, MediaError, ZlmCallError, isMediaError } from '../src/index.ts';

describe('media error catalog', () => {
  it('has exactly these codes and transient flags', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(MEDIA_ERROR_INFO).map(([k, v]) => [k, v.transient])),
      {
        MEDIA_ERR_UNREACHABLE: true,
        MEDIA_ERR_TIMEOUT: true,
        MEDIA_ERR_API: false,
        MEDIA_ERR_BAD_RESPONSE: false,
        MEDIA_ERR_CLOSED: false,
        MEDIA_ERR_HOOK_UNKNOWN: false,
        MEDIA_ERR_HOOK_BODY: false,
        MEDIA_ERR_HOOK_AUTH: false,
        MEDIA_ERR_NO_NODE: true,
        MEDIA_ERR_SSRC_EXHAUSTED: true,
        MEDIA_ERR_INVALID_NODE: false,
        MEDIA_ERR_STORE_UNAVAILABLE: true,
        MEDIA_ERR_STORE_QUERY: false,
      },
    );
  });

  it('ZlmCallError carries node, API and ZLM code; transient follows the table', () => {
    const e = new ZlmCallError('MEDIA_ERR_API', 'x', { nodeId: 'zlm-1', api: 'openRtpServer', zlmCode: -300, zlmMsg: 'bad' });
    assert.ok(e instanceof MediaError && isMediaError(e));
    assert.deepEqual([e.code, e.nodeId, e.api, e.zlmCode, e.zlmMsg, e.transient], ['MEDIA_ERR_API', 'zlm-1', 'openRtpServer', -300, 'bad', false]);
    assert.equal(new MediaError('MEDIA_ERR_TIMEOUT', 't').transient, true);
    assert.equal(isMediaError(new Error('x')), false);
  });
});
