// Registration and keepalive of a simulated device against a tiny @vms/sip platform (real sockets).
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { decodeKeepalive, parseManscdp } from '@vms/gb28181';
import { createSimulatedDevice, RegisterRejectedError } from '../src/index.ts';
import { DEVICE_ID, deviceFor, registeredDevice } from './support/device.ts';
import { cseqOf, DOMAIN, SERVER_ID, TestPlatform } from './support/platform.ts';

describe('registration', () => {
  for (const transport of ['udp', 'tcp'] as const) {
    for (const qop of [false, true]) {
      it(`REGISTER → 401 → digest → 200 over ${transport}${qop ? ' (qop=auth)' : ''}, unregister on close`, async () => {
        const platform = await TestPlatform.start({ qop });
        const device = deviceFor(platform, { transport, registerExpiresS: 600 });
        try {
          await device.start();
          assert.equal(device.registered, true);
          const [challenged, accepted] = platform.registers as [(typeof platform.registers)[0], (typeof platform.registers)[0]];
          assert.equal(platform.registers.length, 2);
          assert.equal(challenged.accepted, false);
          assert.equal(accepted.accepted, true);
          assert.equal(accepted.username, DEVICE_ID);
          assert.equal(accepted.flow.transport, transport);
          assert.equal(accepted.expires, 600);
          assert.equal(accepted.req.rawUri, `sip:${SERVER_ID}@${DOMAIN}`);
          assert.match(accepted.req.headers.get('From') ?? '', new RegExp(`^<sip:${DEVICE_ID}@${DOMAIN}>;tag=`));
          assert.match(accepted.req.headers.get('Contact') ?? '', new RegExp(`^<sip:${DEVICE_ID}@127\\.0\\.0\\.1:${device.sipPort}${transport === 'tcp' ? ';transport=tcp' : ''}>`));
        } finally {
          await device.close();
        }
        try {
          const last = platform.registers.at(-1);
          assert.equal(last?.expires, 0, 'close() sends REGISTER Expires: 0');
          assert.equal(last?.accepted, true);
          assert.equal(last?.req.headers.get('Call-ID'), platform.registers[0]?.req.headers.get('Call-ID'), 'one Call-ID for the binding');
          assert.equal(device.registered, false);
        } finally {
          await platform.close();
        }
      });
    }
  }

  it('refreshes before expiry with the same Call-ID and increasing CSeq', async () => {
    const platform = await TestPlatform.start();
    const device = await registeredDevice(platform, { registerExpiresS: 1 }); // refresh at half time: 500 ms
    try {
      await platform.waitFor(() => device.registrationCount >= 3, 'two refreshes');
      const ok = platform.registers.filter((r) => r.accepted);
      const cseqs = platform.registers.map((r) => cseqOf(r.req));
      assert.deepEqual(cseqs, [...cseqs].sort((a, b) => a - b), 'CSeq increases');
      assert.equal(new Set(cseqs).size, cseqs.length);
      assert.equal(new Set(ok.map((r) => r.req.headers.get('Call-ID'))).size, 1);
    } finally {
      await device.close();
      await platform.close();
    }
  });

  it('a wrong password: registration-failed with the final 401, retried later', async () => {
    const platform = await TestPlatform.start();
    const device = deviceFor(platform, { password: 'wrong', registerRetryMs: 200 });
    try {
      const failed = once(device, 'registration-failed');
      await device.start();
      const [err] = (await failed) as [Error];
      assert.ok(err instanceof RegisterRejectedError);
      assert.deepEqual([err.code, err.status], ['DSIM_ERR_REGISTER_REJECTED', 401]);
      assert.equal(device.registered, false);
      await platform.waitFor(() => platform.registers.length >= 4, 'a retry');
    } finally {
      await device.close();
      await platform.close();
    }
    assert.equal(platform.registers.filter((r) => r.expires === 0).length, 0, 'never bound: nothing to unregister');
  });

  it('keepalives every interval while registered, Notify/Keepalive with the device id', async () => {
    const platform = await TestPlatform.start();
    const device = await registeredDevice(platform, { keepaliveIntervalS: 0.1, charset: 'UTF-8' });
    try {
      await platform.waitFor(() => platform.messagesOf('Keepalive').length >= 3, 'three keepalives');
      const sns = platform.messagesOf('Keepalive').map((m) => {
        const k = decodeKeepalive(parseManscdp(m.req.body));
        assert.equal(k.deviceId, DEVICE_ID);
        assert.equal(k.status, 'OK');
        return Number(k.sn);
      });
      assert.deepEqual(sns, [...sns].sort((a, b) => a - b), 'SN increases');
      assert.match(platform.messagesOf('Keepalive')[0]?.req.body.toString('utf8') ?? '', /^<\?xml version="1.0" encoding="UTF-8"\?>/);
    } finally {
      await device.close();
      await platform.close();
    }
  });

  it('registers again after keepaliveMaxFailures unanswered keepalives', async () => {
    const platform = await TestPlatform.start({ keepaliveStatus: 500 });
    const device = await registeredDevice(platform, { keepaliveIntervalS: 0.05, keepaliveMaxFailures: 2 });
    try {
      await platform.waitFor(() => device.registrationCount >= 2, 're-registration');
      assert.ok(platform.messagesOf('Keepalive').length >= 2);
    } finally {
      await device.close();
      await platform.close();
    }
  });

  for (const [status, why] of [
    [401, 'the platform does not take this flow, SEC-1'],
    [404, 'no registration of it here: a shard a SIP edge moved it to, issue 14'],
    [403, 'refused: register again'],
  ] as const) {
    it(`a keepalive answered ${status} (${why}): registers again at once`, async () => {
      const platform = await TestPlatform.start({ keepaliveStatus: status });
      const device = await registeredDevice(platform, { keepaliveIntervalS: 0.05, keepaliveMaxFailures: 1000 });
      try {
        await platform.waitFor(() => device.registrationCount >= 2, `re-registration after the first ${status}`);
        assert.ok(platform.messagesOf('Keepalive').length <= 3, 'not after keepaliveMaxFailures (1000) failures');
      } finally {
        await device.close();
        await platform.close();
      }
    });
  }

  it('start() against a platform that is down: not registered, keeps retrying; close() is idempotent', async () => {
    const platform = await TestPlatform.start();
    const port = platform.port;
    await platform.close();
    const device = deviceFor(platform, { server: { host: '127.0.0.1', port, id: SERVER_ID }, transport: 'tcp', registerRetryMs: 50 });
    const failures: Error[] = [];
    device.on('registration-failed', (e) => failures.push(e));
    await device.start();
    assert.equal(device.registered, false);
    assert.equal((failures[0] as { code?: string } | undefined)?.code, 'SIP_ERR_TRANSPORT');
    await Promise.all([device.close(), device.close()]);
    await device.close();
  });

  it('close() with the platform gone (UDP, real timers: Timer F = 32 s) still returns within the unregister bound', async () => {
    const platform = await TestPlatform.start();
    const device = await registeredDevice(platform, { sipTimers: {} });
    await platform.close();
    const t0 = Date.now();
    await device.close();
    const took = Date.now() - t0;
    assert.ok(took >= 1900 && took < 3000, `close took ${took} ms`);
  });

  it('close() while the first REGISTER is unanswered: bounded, and start() settles unregistered', async () => {
    const silent = createSocket('udp4'); // receives REGISTERs, answers nothing
    silent.bind(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const device = createSimulatedDevice({
        server: { host: '127.0.0.1', port: silent.address().port, id: SERVER_ID },
        deviceId: DEVICE_ID,
        password: 'x',
      });
      const started = device.start();
      await once(silent, 'message');
      const t0 = Date.now();
      await device.close();
      assert.ok(Date.now() - t0 < 2500, `close took ${Date.now() - t0} ms`);
      await started;
      assert.equal(device.registered, false);
    } finally {
      silent.close();
    }
  });
});
