// Option validation (every problem at once) and the CLI flags that produce fleet options.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceSimConfigError, parseCli, resolveDeviceOptions } from '../src/index.ts';

const base = { server: { host: '127.0.0.1', port: 5060, id: '34020000002000000001' }, deviceId: '34020000001320000001', password: '12345678' };

describe('resolveDeviceOptions', () => {
  it('fills documented defaults and freezes the result', () => {
    const o = resolveDeviceOptions(base);
    assert.equal(Object.isFrozen(o), true);
    assert.deepEqual(
      [o.server.domain, o.transport, o.localHost, o.channels, o.charset, o.registerExpiresS, o.keepaliveIntervalS, o.keepaliveMaxFailures, o.catalogPageSize, o.fps, o.name, o.model],
      ['3402000000', 'udp', '127.0.0.1', 1, 'GB2312', 3600, 60, 3, 10, 25, '模拟设备0001', 'IPC-SIM'],
    );
  });

  it('reports every bad option at once', () => {
    try {
      resolveDeviceOptions({ ...base, deviceId: '123', server: { host: '', port: 0, id: 'x' }, channels: 0, fps: 1000, password: '' });
      assert.fail('expected DeviceSimConfigError');
    } catch (err) {
      assert.ok(err instanceof DeviceSimConfigError);
      assert.deepEqual(err.issues.map((i) => i.split(':')[0]), ['deviceId', 'server.id', 'server.host', 'server.port', 'password', 'channels', 'fps']);
    }
  });
});

describe('parseCli', () => {
  it('the documented invocation', () => {
    const r = parseCli(['--server', '127.0.0.1:5060', '--server-id', '34020000002000000001', '--device-id', '34020000001320000001',
      '--password', '12345678', '--channels', '4', '--transport', 'tcp', '--count', '3', '--charset', 'utf-8', '--keepalive', '30']);
    assert.equal(r.kind, 'run');
    if (r.kind !== 'run') return;
    const f = r.config.fleet;
    assert.deepEqual([f.server, f.firstDeviceId, f.password, f.channels, f.transport, f.count, f.charset, f.keepaliveIntervalS, r.config.logLevel], [
      { host: '127.0.0.1', port: 5060, id: '34020000002000000001' }, '34020000001320000001', '12345678', 4, 'tcp', 3, 'UTF-8', 30, 'info',
    ]);
  });

  it('without --server-id: the platform default id, so `npm start` and the simulator match out of the box', () => {
    const r = parseCli(['--server', '127.0.0.1:5060']);
    assert.equal(r.kind, 'run');
    if (r.kind !== 'run') return;
    assert.deepEqual(r.config.fleet.server, { host: '127.0.0.1', port: 5060, id: '34020000002000000001' });
    assert.equal(r.config.fleet.gbVersion, '2022', 'a 2022 device unless told');
  });

  it('--gb-version 2016 makes a 2016-only device; anything else is refused', () => {
    const r = parseCli(['--server', '127.0.0.1:5060', '--gb-version', '2016']);
    assert.equal(r.kind === 'run' && r.config.fleet.gbVersion, '2016');
    assert.throws(() => parseCli(['--server', '127.0.0.1:5060', '--gb-version', '2011']), (e: unknown) => e instanceof DeviceSimConfigError && e.issues[0]?.startsWith('--gb-version') === true);
  });

  it('--help, and every bad flag reported at once', () => {
    assert.deepEqual(parseCli(['--help']), { kind: 'help' });
    try {
      parseCli(['--server', 'nohost', '--transport', 'sctp', '--count', '0', '--log-level', 'loud']);
      assert.fail('expected DeviceSimConfigError');
    } catch (err) {
      assert.ok(err instanceof DeviceSimConfigError);
      assert.deepEqual(err.issues.map((i) => i.split(':')[0]), ['--server', '--transport', '--log-level', '--count']);
    }
    assert.throws(() => parseCli(['--bogus']), DeviceSimConfigError);
  });
});
