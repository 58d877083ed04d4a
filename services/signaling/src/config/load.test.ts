import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../errors/catalog.ts';
import { DEFAULT_MYSQL_QUEUE_LIMIT, DEFAULT_MYSQL_STATEMENT_TIMEOUT_MS } from '@vms/cluster';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_TCP_CONNECTIONS,
  DEFAULT_MAX_TCP_CONNECTIONS_PER_IP,
  DEFAULT_TCP_IDLE_TIMEOUT_MS,
  DEFAULT_TCP_MESSAGE_TIMEOUT_MS,
} from '@vms/sip';
import { DEFAULT_HTTP_LIMITS } from '../http/http-server.ts';
import { DEFAULT_DEVICE_LIMITS } from '../sip/device-admission.ts';
import { DEFAULT_SHED_POLICY } from '@vms/sip';
import { deviceLimits, httpLimits, mysqlPoolLimits, sipStackLimits } from './limits.ts';
import { loadConfig, type ConfigIo } from './load.ts';
import { envNameOf, SETTINGS } from './schema.ts';
import { devSigningKey } from './signing-key.ts';

const KEY = 'k'.repeat(32);

function io(files: Record<string, string> = {}, address = '10.1.2.3'): ConfigIo {
  return {
    readFile: (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return text;
    },
    networkInterfaces: () => ({
      lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '255.0.0.0', mac: '', cidr: null }],
      eth0: [
        { address: 'fe80::1', family: 'IPv6', internal: false, netmask: '', mac: '', cidr: null, scopeid: 1 },
        { address, family: 'IPv4', internal: false, netmask: '255.255.255.0', mac: '', cidr: null },
      ],
    }),
  };
}

function issuesOf(fn: () => unknown): { key: string; env: string | null; problem: string }[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return [...err.issues];
  }
  assert.fail('expected ConfigError');
}

describe('loadConfig', () => {
  it('starts standalone with documented defaults when nothing is set', () => {
    const c = loadConfig([], {}, io());
    assert.equal(c.sip.host, '10.1.2.3');
    assert.equal(c.sip.port, 5060);
    assert.equal(c.sip.serverId, '34020000002000000001');
    assert.equal(c.sip.realm, '3402000000');
    assert.equal(c.sip.password, null);
    assert.equal(c.sip.instanceId, '10.1.2.3:5060');
    assert.equal(c.sip.internalBaseUrl, 'http://10.1.2.3:18080');
    assert.equal(c.sip.nodeForwardSecret, null);
    assert.equal(c.sip.cascadeNode, false);
    assert.equal(c.sip.keepaliveIntervalSec, 60);
    assert.equal(c.sip.keepaliveTimeoutCount, 3);
    assert.equal(c.sip.offlineScanPeriodSec, 30);
    assert.deepEqual(c.http, { address: '0.0.0.0', port: 18080 });
    assert.equal(c.redis, null);
    assert.equal(c.mysql, null);
    assert.equal(c.auth.signingKeySource, 'dev-default');
    assert.equal(c.auth.signingKey, devSigningKey('34020000002000000001'));
    assert.equal(c.sources['vms.gb28181.sip.host'], 'default');
  });

  it('SIP listens on every interface when its host was detected, only on the host when configured', () => {
    assert.deepEqual([loadConfig([], {}, io()).sip.host, loadConfig([], {}, io()).sip.bindHost], ['10.1.2.3', '0.0.0.0']);
    const set = loadConfig([], { VMS_GB28181_SIP_HOST: '10.9.9.9' }, io()).sip;
    assert.deepEqual([set.host, set.bindHost], ['10.9.9.9', '10.9.9.9']);
    const both = loadConfig([], { VMS_GB28181_SIP_HOST: '203.0.113.5', VMS_GB28181_SIP_BIND_HOST: '0.0.0.0' }, io()).sip;
    assert.deepEqual([both.host, both.bindHost], ['203.0.113.5', '0.0.0.0']);
    for (const wildcard of ['0.0.0.0', '::']) {
      const issues = issuesOf(() => loadConfig([], { VMS_GB28181_SIP_HOST: wildcard }, io()));
      assert.deepEqual(issues.map((i) => [i.key, i.env]), [['vms.gb28181.sip.host', 'VMS_GB28181_SIP_HOST']]);
      assert.match(issues[0]?.problem ?? '', /not a wildcard.*bind-host/);
    }
  });

  it('falls back to 127.0.0.1 without a non-loopback IPv4', () => {
    const c = loadConfig([], {}, { ...io(), networkInterfaces: () => ({}) });
    assert.equal(c.sip.host, '127.0.0.1');
  });

  it('reads nested YAML with unquoted 20-digit ids, and env wins over the file', () => {
    const yaml = [
      'vms:',
      '  gb28181:',
      '    sip:',
      '      host: 10.0.0.11          # comment',
      '      port: 5070',
      '      server-id: 34020000002000000002',
      '      instance-id: signal-node-a',
      '      internal-base-url: http://10.0.0.11:80/',
      '      node-forward-secret: a8f3k29slx7q',
      '      cascade-node: true',
      '      keepalive-interval: 0.5',
      '  auth:',
      `    signing-key: ${KEY}`,
      '  zlm:',
      '    anything: goes   # not our section',
      'server:',
      '  port: 0',
      'redis:',
      '  url: redis+cluster://:pw@h1:7000,h2:7001',
      'mysql:',
      '  url: mysql://root:pw@127.0.0.1:3306/vms',
    ].join('\n');
    const c = loadConfig(['--config', 'a.yml'], { VMS_GB28181_SIP_PORT: '5080', SERVER_PORT: '' }, io({ 'a.yml': yaml }));
    assert.equal(c.sip.host, '10.0.0.11');
    assert.equal(c.sip.port, 5080);
    assert.equal(c.sources['vms.gb28181.sip.port'], 'env');
    assert.equal(c.sources['vms.gb28181.sip.host'], 'file');
    assert.equal(c.sip.serverId, '34020000002000000002');
    assert.equal(c.sip.realm, '3402000000');
    assert.equal(c.sip.instanceId, 'signal-node-a');
    assert.equal(c.sip.internalBaseUrl, 'http://10.0.0.11:80');
    assert.equal(c.sip.nodeForwardSecret, 'a8f3k29slx7q');
    assert.equal(c.sip.cascadeNode, true);
    assert.equal(c.sip.keepaliveIntervalSec, 0.5);
    assert.equal(c.http.port, 0, 'port 0 is allowed; an empty env var means unset');
    assert.deepEqual(c.redis, { url: 'redis+cluster://:pw@h1:7000,h2:7001', mode: 'cluster' });
    assert.deepEqual(c.mysql, { url: 'mysql://root:pw@127.0.0.1:3306/vms', database: 'vms' });
    assert.equal(c.auth.signingKeySource, 'configured');
    assert.equal(c.configFile, 'a.yml');
  });

  it('accepts --config=FILE and an empty cascade-node as false', () => {
    const c = loadConfig(['--config=b.yml'], {}, io({ 'b.yml': 'vms:\n  gb28181:\n    sip:\n      cascade-node:\n' }));
    assert.equal(c.sip.cascadeNode, false);
  });

  it('derives every env name from the key path (SPEC §12)', () => {
    const names = SETTINGS.map((s) => envNameOf(s.key));
    for (const expected of [
      'VMS_GB28181_SIP_HOST', 'VMS_GB28181_SIP_PORT', 'VMS_GB28181_SIP_SERVER_ID', 'VMS_GB28181_SIP_PASSWORD',
      'VMS_GB28181_SIP_INSTANCE_ID', 'VMS_GB28181_SIP_INTERNAL_BASE_URL', 'VMS_GB28181_SIP_NODE_FORWARD_SECRET',
      'VMS_GB28181_SIP_CASCADE_NODE', 'VMS_GB28181_SIP_KEEPALIVE_INTERVAL', 'VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT',
      'VMS_GB28181_SIP_OFFLINE_SCAN_PERIOD', 'SERVER_PORT', 'REDIS_URL', 'MYSQL_URL', 'VMS_AUTH_SIGNING_KEY',
    ]) {
      assert.ok(names.includes(expected), expected);
    }
  });

  it('reports every bad key at once, naming key and env variable', () => {
    const issues = issuesOf(() =>
      loadConfig([], {
        VMS_GB28181_SIP_PORT: '70000',
        VMS_GB28181_SIP_SERVER_ID: '3402000000200000000',
        VMS_GB28181_SIP_CASCADE_NODE: 'maybe',
        VMS_GB28181_SIP_KEEPALIVE_INTERVAL: '-1',
        VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT: '0',
        VMS_GB28181_SIP_INTERNAL_BASE_URL: 'ftp://x',
        VMS_GB28181_SIP_INSTANCE_ID: 'has space',
        SERVER_PORT: 'eighty',
        REDIS_URL: 'http://x',
        MYSQL_URL: 'mysql://h:3306/',
        VMS_AUTH_SIGNING_KEY: 'short',
      }, io()),
    );
    assert.deepEqual(issues.map((i) => i.key).sort(), [
      'mysql.url', 'redis.url', 'server.port', 'vms.auth.signing-key', 'vms.gb28181.sip.cascade-node',
      'vms.gb28181.sip.instance-id', 'vms.gb28181.sip.internal-base-url', 'vms.gb28181.sip.keepalive-interval',
      'vms.gb28181.sip.keepalive-timeout-count', 'vms.gb28181.sip.port', 'vms.gb28181.sip.server-id',
    ]);
    assert.equal(issues.find((i) => i.key === 'server.port')?.env, 'SERVER_PORT');
  });

  it('never echoes secret values in errors', () => {
    try {
      loadConfig([], { VMS_AUTH_SIGNING_KEY: 'tooShortSecret', MYSQL_URL: 'nope://secretpw' }, io());
      assert.fail('expected ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /vms\.auth\.signing-key \(VMS_AUTH_SIGNING_KEY\)/);
      assert.match(err.message, /mysql\.url \(MYSQL_URL\)/);
      assert.doesNotMatch(err.message, /tooShortSecret|secretpw/);
    }
  });

  it('reports unknown keys in owned sections, a missing file and non-scalar values', () => {
    const yaml = 'vms:\n  gb28181:\n    sip:\n      server_id: 1\n      host: [a, b]\n';
    assert.deepEqual(
      issuesOf(() => loadConfig(['--config', 'c.yml'], {}, io({ 'c.yml': yaml }))).map((i) => i.key).sort(),
      ['vms.gb28181.sip.host', 'vms.gb28181.sip.server_id'],
    );
    const missing = issuesOf(() => loadConfig(['--config', 'missing.yml'], {}, io()));
    assert.equal(missing[0]?.key, '--config');
    assert.match(missing[0]?.problem ?? '', /ENOENT/);
    assert.equal(issuesOf(() => loadConfig(['--config'], {}, io()))[0]?.key, '--config');
    assert.equal(issuesOf(() => loadConfig(['--config', 'd.yml'], {}, io({ 'd.yml': 'a: [' })))[0]?.key, '--config');
  });

  it('SEC-1 device trust settings: defaults, values, and bad ones named', () => {
    const d = loadConfig([], {}, io()).sip;
    assert.deepEqual([d.registerExpiresMax, d.registerExpiresMin, d.digestQop, d.digestUsername], [3600, 60, 'auth', 'device-id']);
    const c = loadConfig(
      [],
      {
        VMS_GB28181_SIP_REGISTER_EXPIRES_MAX: '7200',
        VMS_GB28181_SIP_REGISTER_EXPIRES_MIN: '30',
        VMS_GB28181_SIP_DIGEST_QOP: 'none',
        VMS_GB28181_SIP_DIGEST_USERNAME: 'any',
      },
      io(),
    ).sip;
    assert.deepEqual([c.registerExpiresMax, c.registerExpiresMin, c.digestQop, c.digestUsername], [7200, 30, 'none', 'any']);
    const bad = issuesOf(() =>
      loadConfig(
        [],
        { VMS_GB28181_SIP_REGISTER_EXPIRES_MAX: '4294967295', VMS_GB28181_SIP_DIGEST_QOP: 'auth-int', VMS_GB28181_SIP_DIGEST_USERNAME: 'admin' },
        io(),
      ),
    );
    assert.deepEqual(bad.map((i) => i.key), ['vms.gb28181.sip.register-expires-max', 'vms.gb28181.sip.digest-qop', 'vms.gb28181.sip.digest-username']);
    const crossed = issuesOf(() => loadConfig([], { VMS_GB28181_SIP_REGISTER_EXPIRES_MAX: '100', VMS_GB28181_SIP_REGISTER_EXPIRES_MIN: '600' }, io()));
    assert.deepEqual(crossed.map((i) => [i.key, i.env]), [['vms.gb28181.sip.register-expires-min', 'VMS_GB28181_SIP_REGISTER_EXPIRES_MIN']]);
    assert.deepEqual(issuesOf(() => loadConfig([], { VMS_GB28181_SIP_REGISTER_EXPIRES_MIN: '0' }, io())).map((i) => i.key), ['vms.gb28181.sip.register-expires-min']);
  });

  it('bounds (SPEC SEC-3): defaults are the enforcing modules\' defaults; YAML and env set them; bad values name the key', () => {
    const c = loadConfig([], {}, io());
    assert.deepEqual(httpLimits(c.limits), DEFAULT_HTTP_LIMITS);
    assert.deepEqual(deviceLimits(c.limits), DEFAULT_DEVICE_LIMITS);
    assert.deepEqual(mysqlPoolLimits(c.limits), { statementTimeoutMs: DEFAULT_MYSQL_STATEMENT_TIMEOUT_MS, queueLimit: DEFAULT_MYSQL_QUEUE_LIMIT });
    assert.deepEqual(sipStackLimits(c.limits), {
      maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
      maxTcpConnections: DEFAULT_MAX_TCP_CONNECTIONS,
      maxTcpConnectionsPerIp: DEFAULT_MAX_TCP_CONNECTIONS_PER_IP,
      tcpIdleTimeoutMs: DEFAULT_TCP_IDLE_TIMEOUT_MS,
      tcpMessageTimeoutMs: DEFAULT_TCP_MESSAGE_TIMEOUT_MS,
    });
    const yaml = 'vms:\n  limits:\n    device-max-channels: 80000\n    http-request-timeout: 12.5\n';
    const set = loadConfig(['--config', 'c.yaml'], { VMS_LIMITS_SIP_TCP_CONNECTIONS_PER_IP: '8' }, io({ 'c.yaml': yaml }));
    assert.deepEqual([set.limits.deviceMaxChannels, set.limits.httpRequestTimeoutMs, set.limits.sipTcpConnectionsPerIp], [80_000, 12_500, 8]);
    assert.deepEqual(loadConfig([], { VMS_LIMITS_EDGE_ADDRESSES: '10.9.9.9, 10.244.0.0/16,fd00::/8' }, io()).limits.edgeAddresses, ['10.9.9.9', '10.244.0.0/16', 'fd00::/8']);
    const issues = issuesOf(() => loadConfig([], { VMS_LIMITS_DEVICE_MESSAGE_RATE: '0', VMS_LIMITS_EDGE_ADDRESSES: 'edge-1.local', VMS_LIMITS_HTTP_BODY_LIMIT: 'lots' }, io()));
    assert.deepEqual(issues.map((i) => [i.key, i.env]).sort(), [
      ['vms.limits.device-message-rate', 'VMS_LIMITS_DEVICE_MESSAGE_RATE'],
      ['vms.limits.edge-addresses', 'VMS_LIMITS_EDGE_ADDRESSES'],
      ['vms.limits.http-body-limit', 'VMS_LIMITS_HTTP_BODY_LIMIT'],
    ]);
    assert.equal(issuesOf(() => loadConfig([], { VMS_LIMITS_EDGE_ADDRESSES: '10.0.0.0/33' }, io()))[0]?.key, 'vms.limits.edge-addresses');
  });

  it('REGISTER shedding marks (issue 11): defaults are the shedder\'s; set by env; bad values and a crossed band name the key', () => {
    assert.deepEqual(loadConfig([], {}, io()).limits.registerShed, DEFAULT_SHED_POLICY);
    const set = loadConfig(
      [],
      {
        VMS_LIMITS_REGISTER_SHED_QUEUE_HIGH: '262144',
        VMS_LIMITS_REGISTER_SHED_QUEUE_LOW: '65536',
        VMS_LIMITS_REGISTER_SHED_MAX_PENDING: '200',
        VMS_LIMITS_REGISTER_SHED_UTILIZATION_HIGH: '95',
        VMS_LIMITS_REGISTER_SHED_UTILIZATION_LOW: '60',
        VMS_LIMITS_REGISTER_SHED_MAX_SHARE: '50',
        VMS_LIMITS_REGISTER_RETRY_AFTER: '10',
        VMS_LIMITS_REGISTER_RETRY_AFTER_SPREAD: '50',
      },
      io(),
    ).limits.registerShed;
    assert.deepEqual(set, {
      ...DEFAULT_SHED_POLICY,
      highQueueBytes: 262_144,
      lowQueueBytes: 65_536,
      maxPending: 200,
      highUtilization: 0.95,
      lowUtilization: 0.6,
      maxFraction: 0.5,
      retryAfterMinSec: 10,
      retryAfterSpreadSec: 50,
    });
    const bad = issuesOf(() => loadConfig([], { VMS_LIMITS_REGISTER_SHED_MAX_SHARE: '101', VMS_LIMITS_REGISTER_SHED_QUEUE_HIGH: '0', VMS_LIMITS_REGISTER_RETRY_AFTER: 'soon' }, io()));
    assert.deepEqual(bad.map((i) => i.key).sort(), ['vms.limits.register-retry-after', 'vms.limits.register-shed-max-share', 'vms.limits.register-shed-queue-high']);
    const crossed = issuesOf(() => loadConfig([], { VMS_LIMITS_REGISTER_SHED_QUEUE_LOW: '2000000', VMS_LIMITS_REGISTER_SHED_UTILIZATION_HIGH: '70' }, io()));
    assert.deepEqual(crossed.map((i) => i.key).sort(), ['vms.limits.register-shed-queue-low', 'vms.limits.register-shed-utilization-low']);
    // the kernel accounts up to twice SO_RCVBUF: a shedding buffer with no room over the high mark is refused
    const hidden = issuesOf(() => loadConfig([], { VMS_LIMITS_REGISTER_SHED_RECEIVE_BUFFER: '524288' }, io()));
    assert.deepEqual(hidden.map((i) => i.key), ['vms.limits.register-shed-receive-buffer']);
    assert.equal(loadConfig([], { VMS_LIMITS_REGISTER_SHED_RECEIVE_BUFFER: '524289' }, io()).limits.registerShed.sheddingReceiveBufferBytes, 524_289);
  });

  it('ownership renewal share (issue 11): 0.4 by default; 0-0.5 accepted from env and YAML; anything else names the key', () => {
    assert.equal(loadConfig([], {}, io()).sip.ownerRenewAfterShare, 0.4);
    assert.equal(loadConfig([], { VMS_CLUSTER_OWNER_RENEW_AFTER: '0' }, io()).sip.ownerRenewAfterShare, 0);
    assert.equal(loadConfig([], { VMS_CLUSTER_OWNER_RENEW_AFTER: '.25' }, io()).sip.ownerRenewAfterShare, 0.25);
    assert.equal(loadConfig(['--config', '/etc/vms.yaml'], {}, io({ '/etc/vms.yaml': 'vms:\n  cluster:\n    owner-renew-after: 0.5\n' })).sip.ownerRenewAfterShare, 0.5);
    for (const raw of ['0.6', '1', '-0.1', '40%', 'half', '0.1234', '0.']) {
      const bad = issuesOf(() => loadConfig([], { VMS_CLUSTER_OWNER_RENEW_AFTER: raw }, io()));
      assert.deepEqual(bad.map((i) => i.key), ['vms.cluster.owner-renew-after'], raw);
    }
  });

  it('a SIP port shared with other instances (issue 11): off by default; sockets from LISTEN_FDS; reuse-port on a Node that sets it; what it needs named by key', () => {
    const at = (nodeVersion: string, pid = 77): ConfigIo => ({ ...io(), pid, nodeVersion });
    const handedOver = { LISTEN_FDS: '2', LISTEN_PID: '77', LISTEN_FDNAMES: 'sip-udp:sip-tcp' };
    const id = { VMS_GB28181_SIP_INSTANCE_ID: 'shard-1' };
    assert.equal(loadConfig([], {}, at('20.20.2')).sip.portSharing, null);
    assert.equal(loadConfig([], { ...handedOver, LISTEN_PID: '78' }, at('20.20.2')).sip.portSharing, null, "another process's sockets");
    assert.deepEqual(loadConfig([], { ...handedOver, ...id }, at('20.20.2')).sip.portSharing, { kind: 'inherited', udpFd: 3, tcpFd: 4 });
    assert.deepEqual(loadConfig([], { VMS_GB28181_SIP_REUSE_PORT: 'true', ...id }, at('22.12.0')).sip.portSharing, { kind: 'reuse-port' });
    assert.deepEqual(loadConfig([], { VMS_GB28181_SIP_REUSE_PORT: 'true', ...handedOver, ...id }, at('20.20.2')).sip.portSharing, { kind: 'inherited', udpFd: 3, tcpFd: 4 }, 'handed-over sockets need no SO_REUSEPORT from Node');

    const problems = (env: Record<string, string>, nodeVersion = '22.12.0') => issuesOf(() => loadConfig([], env, at(nodeVersion)));
    const oldNode = problems({ VMS_GB28181_SIP_REUSE_PORT: 'true', ...id }, '20.20.2');
    assert.deepEqual(oldNode.map((i) => [i.key, i.env]), [['vms.gb28181.sip.reuse-port', 'VMS_GB28181_SIP_REUSE_PORT']]);
    assert.match(oldNode[0]?.problem ?? '', /Node \(20\.20\.2\) cannot set SO_REUSEPORT.*socket-activate\.py/);
    const noId = problems(handedOver, '20.20.2');
    assert.deepEqual(noId.map((i) => i.key), ['vms.gb28181.sip.instance-id']);
    assert.match(noId[0]?.problem ?? '', /unique to each instance/);
    assert.deepEqual(problems({ VMS_GB28181_SIP_REUSE_PORT: 'true', VMS_GB28181_SIP_PORT: '0', ...id }).map((i) => i.key), ['vms.gb28181.sip.port']);
    assert.deepEqual(problems({ ...handedOver, LISTEN_FDNAMES: 'sip-udp', ...id }).map((i) => [i.key, i.env]), [['LISTEN_FDS', 'LISTEN_FDS']]);
  });

  it('routing settings: defaults, values, an unknown time zone and a timeout over the interval named by key', () => {
    assert.deepEqual(loadConfig([], {}, io()).routing, { timeZone: 'Asia/Shanghai', pollIntervalMs: 5000, probeIntervalMs: 10_000, probeTimeoutMs: 3000, buildThreadIdleMs: null });
    const c = loadConfig(
      [],
      { VMS_ROUTING_TIME_ZONE: 'Europe/Paris', VMS_ROUTING_POLL_INTERVAL: '2', VMS_ROUTING_PROBE_INTERVAL: '30', VMS_ROUTING_PROBE_TIMEOUT: '0.5', VMS_ROUTING_BUILD_THREAD_IDLE: '300' },
      io(),
    ).routing;
    assert.deepEqual(c, { timeZone: 'Europe/Paris', pollIntervalMs: 2000, probeIntervalMs: 30_000, probeTimeoutMs: 500, buildThreadIdleMs: 300_000 });
    const bad = issuesOf(() => loadConfig([], { VMS_ROUTING_TIME_ZONE: 'Mars/Olympus', VMS_ROUTING_POLL_INTERVAL: '0', VMS_ROUTING_BUILD_THREAD_IDLE: 'Infinity' }, io()));
    assert.deepEqual(bad.map((i) => [i.key, i.env]), [
      ['vms.routing.time-zone', 'VMS_ROUTING_TIME_ZONE'],
      ['vms.routing.poll-interval', 'VMS_ROUTING_POLL_INTERVAL'],
      ['vms.routing.build-thread-idle', 'VMS_ROUTING_BUILD_THREAD_IDLE'],
    ]);
    const crossed = issuesOf(() => loadConfig([], { VMS_ROUTING_PROBE_INTERVAL: '2', VMS_ROUTING_PROBE_TIMEOUT: '5' }, io()));
    assert.deepEqual(crossed.map((i) => i.key), ['vms.routing.probe-timeout']);
  });

  it('returns a deeply frozen object', () => {
    const c = loadConfig([], {}, io());
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.sip) && Object.isFrozen(c.sources));
    assert.throws(() => {
      (c.sip as { port: number }).port = 1;
    }, TypeError);
  });

  it('brackets an IPv6 host in the derived internal base URL and accepts redis:// URLs', () => {
    const c = loadConfig([], { VMS_GB28181_SIP_HOST: 'fd00::5', REDIS_URL: 'redis://:pw@127.0.0.1:6379/0' }, io());
    assert.equal(c.sip.internalBaseUrl, 'http://[fd00::5]:18080');
    assert.deepEqual(c.redis, { url: 'redis://:pw@127.0.0.1:6379/0', mode: 'single' });
    for (const bad of ['redis://', 'redis://a,b:1', 'http://x', 'redis://h:99999']) {
      assert.equal(issuesOf(() => loadConfig([], { REDIS_URL: bad }, io()))[0]?.key, 'redis.url', bad);
    }
    assert.equal(loadConfig([], { REDIS_URL: 'rediss+cluster://u:p@h1:1,h2' }, io()).redis?.mode, 'cluster');
  });
});
