// A forward must wait longer than the owner waits on the device, or the caller hears 4604 (owner
// unreachable) where the owner would have answered 4606 (device did not answer) — ROUTE-5.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { INVITE_TIMEOUT_MS } from '../media/media-wiring.ts';
import { DEFAULT_QUERY_TIMEOUTS } from '../sip/query-timeouts.ts';
import { ROUTES } from '../http/route-table.ts';
import { DEFAULT_FORWARD_READ_TIMEOUT_MS, forwardReadTimeoutMs } from './forward-timeouts.ts';

const route = (id: string) => {
  const r = ROUTES.find((x) => x.id === id);
  assert.ok(r !== undefined, id);
  return r;
};

describe('forward read timeouts', () => {
  it('playback control waits past the owner INFO deadline (was the 10 s default: 4604 for a slow device)', () => {
    assert.ok(forwardReadTimeoutMs(route('playback.control')) > DEFAULT_QUERY_TIMEOUTS.requestMs + 2000);
    assert.ok(forwardReadTimeoutMs(route('playback.control')) > DEFAULT_FORWARD_READ_TIMEOUT_MS);
  });
  it('INVITE-backed starts wait past the INVITE deadline; device queries past request + response deadlines', () => {
    for (const id of ['play.start', 'playback.start', 'download.start']) assert.ok(forwardReadTimeoutMs(route(id)) > INVITE_TIMEOUT_MS + 2000, id);
    const q = DEFAULT_QUERY_TIMEOUTS;
    assert.ok(forwardReadTimeoutMs(route('device.info')) >= q.requestMs + q.deviceInfoMs);
    assert.ok(forwardReadTimeoutMs(route('device.status')) >= q.requestMs + q.deviceStatusMs);
  });
});
