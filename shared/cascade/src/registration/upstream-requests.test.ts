// Request shapes checked against hand-written expectations from the captures (samples 16-18).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { upstreamPlatform } from '../platform/platform.validate.ts';
import { keepaliveRequest, registerRequest, upstreamAuth, upstreamMessage, upstreamUri } from './upstream-requests.ts';

const p = upstreamPlatform({ serverId: '34010000002000000001', host: '10.1.2.3', port: 5061, transport: 'tcp', localId: '34020000002000000001', password: 'pw' });

describe('upstream request specs', () => {
  it('REGISTER: our id at our domain in From/To, the upstream id at its address as Request-URI', () => {
    assert.deepEqual(registerRequest(p, { callId: 'c1@x', fromTag: 't1' }, 5, 3600), {
      method: 'REGISTER',
      uri: 'sip:34010000002000000001@10.1.2.3:5061',
      headers: {
        From: '<sip:34020000002000000001@3402000000>;tag=t1',
        To: '<sip:34020000002000000001@3402000000>',
        'Call-ID': 'c1@x',
        CSeq: '5 REGISTER',
        Expires: 3600,
      },
      target: { host: '10.1.2.3', port: 5061, transport: 'tcp' },
    });
    assert.deepEqual(upstreamAuth(p), { username: '34020000002000000001', password: 'pw' });
  });

  it('Keepalive MESSAGE: Notify/Keepalive with our id, exact bytes, GB2312 declared', () => {
    const spec = keepaliveRequest(p, 7);
    assert.equal(spec.method, 'MESSAGE');
    assert.equal(spec.contentType, 'Application/MANSCDP+xml');
    assert.deepEqual(spec.headers, { From: '<sip:34020000002000000001@3402000000>', To: '<sip:34010000002000000001@3401000000>' });
    assert.equal(
      (spec.body as Buffer).toString('latin1'),
      '<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\n<CmdType>Keepalive</CmdType>\n<SN>7</SN>\n' +
        '<DeviceID>34020000002000000001</DeviceID>\n<Status>OK</Status>\n</Notify>\r\n',
    );
  });

  it('a UTF-8 platform gets UTF-8 bodies; an IPv6 host is bracketed in the URI', () => {
    const u = upstreamPlatform({ ...p, charset: 'UTF-8', host: '::1' });
    assert.match((upstreamMessage(u, Buffer.from('x')).body as Buffer).toString(), /^x$/);
    assert.match((keepaliveRequest(u, 1).body as Buffer).toString(), /^<\?xml version="1.0" encoding="UTF-8"\?>/);
    assert.equal(upstreamUri(u), 'sip:34010000002000000001@[::1]:5061');
    assert.equal(upstreamAuth(upstreamPlatform({ ...p, password: '' })), undefined);
  });
});
