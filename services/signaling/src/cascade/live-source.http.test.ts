// LiveSource through the control API (live-source.http.ts): the envelope → CascadeError table is a
// contract (the upstream's SIP status follows from it), and the requests carry a token the API accepts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CASCADE_ERROR_INFO, CascadeError } from '@vms/cascade';
import { verifyToken } from '../auth/jwt.ts';
import { FakeClock } from '../core/clock.ts';
import { createHttpLiveSource, LIVE_SOURCE_FAILURES, LIVE_TOKEN_USER } from './live-source.http.ts';

const KEY = 'live-source-test-key-0123456789abcdef';
const NOW = Date.UTC(2025, 5, 1);

interface Injected {
  url: string;
  auth: string;
}

function fakeApi(answer: (url: string) => { status?: number; body: unknown }) {
  const calls: Injected[] = [];
  const api = {
    inject: async (o: { url: string; headers: Record<string, string> }) => {
      calls.push({ url: o.url, auth: o.headers['blade-auth'] ?? '' });
      const a = answer(o.url);
      return { statusCode: a.status ?? 200, body: typeof a.body === 'string' ? a.body : JSON.stringify(a.body) };
    },
  };
  return { api: api as never, calls };
}

describe('LiveSource over the control API', () => {
  it('maps play failures to the upstream answer exactly as pinned', () => {
    const status = Object.fromEntries(Object.entries(LIVE_SOURCE_FAILURES).map(([code, c]) => [code, [c, CASCADE_ERROR_INFO[c].sipStatus]]));
    assert.deepEqual(status, {
      404: ['CASCADE_ERR_CHANNEL_NOT_SHARED', 404],
      4601: ['CASCADE_ERR_SOURCE_UNAVAILABLE', 480],
      4602: ['CASCADE_ERR_SOURCE_UNAVAILABLE', 480],
      4603: ['CASCADE_ERR_SOURCE_UNAVAILABLE', 480],
      4604: ['CASCADE_ERR_SOURCE_TIMEOUT', 504],
      4606: ['CASCADE_ERR_SOURCE_TIMEOUT', 504],
      4607: ['CASCADE_ERR_SOURCE_UNAVAILABLE', 480],
      4608: ['CASCADE_ERR_MEDIA', 500],
      4609: ['CASCADE_ERR_MEDIA', 500],
    });
  });

  it('start: POST play/start as an operator of the tenant; stop: play/stop, an ended session is fine', async () => {
    const { api, calls } = fakeApi((url) =>
      url.startsWith('/vms/play/start')
        ? { body: { code: 200, success: true, msg: 'ok', data: { sessionId: 's1', streamId: 'd_c', mediaNodeId: 'zlm-1', urls: {} } } }
        : { status: 404, body: { code: 404, success: false, msg: 'unknown or ended media session s1', data: null } },
    );
    const source = createHttpLiveSource({ api: () => api, signingKey: KEY, clock: new FakeClock(NOW) });
    const viewer = await source.start({ deviceId: '34020000001320000001', channelId: '34020000001310000001', tenantId: '100001' });
    assert.deepEqual(viewer, { purpose: 'live', sessionId: 's1', streamId: 'd_c', mediaNodeId: 'zlm-1' });
    await source.stop(viewer, '100001');
    assert.deepEqual(calls.map((c) => c.url), ['/vms/play/start?channelId=34020000001310000001', '/vms/play/stop?sessionId=s1']);
    const principal = await verifyToken(calls[0]!.auth.replace(/^bearer /, ''), KEY, NOW);
    assert.deepEqual(principal, { tenantId: '100001', userId: LIVE_TOKEN_USER, role: 'tenant' });
  });

  it('playback: playback/start with the range in ISO form, control by session, playback/stop; download passes its speed', async () => {
    let control: { code: number; success: boolean } = { code: 200, success: true };
    const { api, calls } = fakeApi((url) =>
      url.includes('/start?')
        ? { body: { code: 200, success: true, msg: 'ok', data: { sessionId: 'p1', streamId: 'playback_c_x', mediaNodeId: 'zlm-1', urls: {} } } }
        : url.startsWith('/vms/playback/control')
          ? { body: { ...control, msg: 'm', data: null } }
          : { body: { code: 200, success: true, msg: 'ok', data: null } },
    );
    const source = createHttpLiveSource({ api: () => api, signingKey: KEY, clock: new FakeClock(NOW) });
    const history = { purpose: 'playback' as const, start: new Date('2026-11-30T00:00:00Z'), end: new Date('2026-11-30T01:00:00Z') };
    const viewer = await source.start({ deviceId: '34020000001320000001', channelId: '34020000001310000001', tenantId: '100001', history });
    assert.equal(viewer.purpose, 'playback');
    await source.control(viewer, '100001', { action: 'seek', value: 600 });
    await source.control(viewer, '100001', { action: 'pause' });
    control = { code: 4606, success: false };
    await assert.rejects(source.control(viewer, '100001', { action: 'resume' }), (e: CascadeError) => e.code === 'CASCADE_ERR_SOURCE_TIMEOUT');
    control = { code: 404, success: false };
    await assert.rejects(source.control(viewer, '100001', { action: 'resume' }), (e: CascadeError) => e.sipStatus === 481);
    await source.stop(viewer, '100001');
    await source.start({ deviceId: '34020000001320000001', channelId: '34020000001310000001', tenantId: '100001', history: { ...history, purpose: 'download', speed: 4 } });
    assert.deepEqual(calls.map((c) => c.url), [
      '/vms/playback/start?channelId=34020000001310000001&startTime=2026-11-30T00%3A00%3A00.000Z&endTime=2026-11-30T01%3A00%3A00.000Z',
      '/vms/playback/control?sessionId=p1&action=seek&value=600',
      '/vms/playback/control?sessionId=p1&action=pause',
      '/vms/playback/control?sessionId=p1&action=resume',
      '/vms/playback/control?sessionId=p1&action=resume',
      '/vms/playback/stop?sessionId=p1',
      '/vms/download/start?channelId=34020000001310000001&startTime=2026-11-30T00%3A00%3A00.000Z&endTime=2026-11-30T01%3A00%3A00.000Z&speed=4',
    ]);
  });

  it('failures: envelope codes through the table, anything else (or no envelope, no API) is a media failure', async () => {
    let next: { status?: number; body: unknown } = { body: { code: 4601, success: false, msg: 'device offline', data: null } };
    const { api } = fakeApi(() => next);
    let built: typeof api | null = api;
    const source = createHttpLiveSource({ api: () => built, signingKey: KEY, clock: new FakeClock(NOW) });
    const req = { deviceId: '34020000001320000001', channelId: '34020000001310000001', tenantId: '000000' };
    const codeOf = async (): Promise<string> => {
      try {
        await source.start(req);
      } catch (err) {
        assert.ok(err instanceof CascadeError);
        return err.code;
      }
      return 'resolved';
    };
    assert.equal(await codeOf(), 'CASCADE_ERR_SOURCE_UNAVAILABLE');
    next = { body: { code: 4606, success: false, msg: 'timeout', data: null } };
    assert.equal(await codeOf(), 'CASCADE_ERR_SOURCE_TIMEOUT');
    next = { status: 400, body: { code: 400, success: false, msg: 'bad parameter', data: null } };
    assert.equal(await codeOf(), 'CASCADE_ERR_MEDIA');
    next = { status: 502, body: '<html>bad gateway</html>' };
    assert.equal(await codeOf(), 'CASCADE_ERR_MEDIA');
    next = { body: { code: 200, success: true, msg: 'ok', data: { sessionId: 's1' } } };
    assert.equal(await codeOf(), 'CASCADE_ERR_MEDIA');
    built = null;
    assert.equal(await codeOf(), 'CASCADE_ERR_MEDIA');
  });
});
