// The body of `PUT /vms/platforms/:serverId/channels`, element by element: whatever JSON arrives, a valid
// channel or CascadeError (answered as a bad parameter), never a TypeError.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCascadeError } from '@vms/cascade';
import { sharedChannelFromBody } from './platforms.ts';

describe('platforms.channels.replace body elements', () => {
  it('takes ids given as strings', () => {
    assert.deepEqual(sharedChannelFromBody({ deviceId: '34020000001320000001', channelId: '34020000001310000001' }), {
      deviceId: '34020000001320000001',
      channelId: '34020000001310000001',
      catalogGroupId: null,
      parentId: null,
    });
  });

  it('refuses objects where ids belong with CascadeError, not TypeError', () => {
    // found by the fuzz bench's "control api json" target: String({"toString": false}) throws TypeError
    for (const text of ['{"deviceId":{"toString":false},"channelId":"1"}', '{"deviceId":"1","channelId":{"toString":{}}}', '{"deviceId":3402,"channelId":"1"}', 'null', '[]', '7']) {
      assert.throws(() => sharedChannelFromBody(JSON.parse(text)), (err: unknown) => isCascadeError(err) && err.code === 'CASCADE_ERR_INVALID_CHANNEL', text);
    }
  });
});
