// `npm start -- cluster`: a local three-node cluster to try owner routing by hand (SPEC §2-§5).
// Starts a throw-away redis-server and MariaDB (data in temp dirs, removed on exit), then node-a
// (cascade), node-b and node-c on one address with their own SIP and HTTP ports, one forward secret
// and one token signing key; optionally one simulated SIPp camera per node. Prints where to point
// devices, a token and example calls. Ctrl-C stops everything.
//
//   npx tsx scripts/cluster-demo.ts [--host 127.0.0.1] [--no-devices]
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { signToken } from '@vms/signaling';
import {
  freePort,
  findBinary,
  runSipp,
  startMariaDb,
  startRedis,
  startService,
  tsxArgs,
  waitFor,
  type ServiceProcess,
} from '@vms/harness';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'services', 'signaling', 'src', 'main.ts');
const DEVICE_SCENARIO = join(ROOT, 'test', 'sipp', 'routing', 'gb-device.xml');
const DEVICE_OOC_SCENARIO = join(ROOT, 'test', 'sipp', 'routing', 'gb-device-ooc.xml');
const SERVER_ID = '34020000002000000001';
const REALM = SERVER_ID.slice(0, 10);
const NODES = [
  { code: 'node-a', sip: 5061, http: 18081, cascade: true },
  { code: 'node-b', sip: 5062, http: 18082, cascade: false },
  { code: 'node-c', sip: 5063, http: 18083, cascade: false },
] as const;

const { values: args } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    'no-devices': { type: 'boolean', default: false },
  },
});
const HOST = args.host;

/** The preferred port if it is free on TCP and UDP, else one from the OS. */
async function portOr(preferred: number, udp: boolean): Promise<number> {
  const tcpFree = await new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ port: preferred, host: HOST, exclusive: true }, () => s.close(() => resolve(true)));
  });
  const udpFree =
    !udp ||
    (await new Promise<boolean>((resolve) => {
      const s = createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(preferred, HOST, () => s.close(() => resolve(true)));
    }));
  return tcpFree && udpFree ? preferred : freePort({ udp, host: HOST });
}

const say = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

// Start-up progress (issue 12 item 8): numbered steps, each with its time, so a slow start shows where it is.
const STEPS = NODES.length + 3; // stores, each node, the node table, the simulated cameras
let stepNo = 0;
function step(what: string): (result?: string) => void {
  const n = ++stepNo;
  const t0 = Date.now();
  say(`[${n}/${STEPS}] ${what}...`);
  return (result = 'done') => say(`[${n}/${STEPS}] ${what}: ${result} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** Echoes an instance's warnings, errors and a few telling events, one line each. */
function follow(name: string, proc: ServiceProcess): void {
  const interesting = new Set(['device registered', 'device unregistered', 'device offline', 'cascade leader', 'signaling instance started']);
  let seen = 0;
  const timer = setInterval(() => {
    const out = proc.output();
    if (out.length < seen) seen = 0; // the capture buffer rolled over
    const fresh = out.slice(seen);
    const cut = fresh.lastIndexOf('\n');
    if (cut < 0) return;
    seen += cut + 1;
    for (const line of fresh.slice(0, cut).split('\n')) {
      try {
        const rec = JSON.parse(line) as { level?: number; msg?: string; deviceId?: string; leader?: string; err?: { message?: string } };
        if ((rec.level ?? 0) >= 40 || interesting.has(rec.msg ?? '')) {
          const extra = rec.deviceId ?? rec.leader ?? rec.err?.message ?? '';
          say(`[${name}] ${rec.msg ?? ''}${extra === '' ? '' : ` (${extra})`}`);
        }
      } catch {
        if (line.trim() !== '') say(`[${name}] ${line}`);
      }
    }
  }, 500);
  timer.unref();
}

async function main(): Promise<void> {
  const stores = step('starting redis-server and MariaDB (temporary data)');
  const [redis, db] = await Promise.all([startRedis(), startMariaDb({ database: 'vms' })]);
  stores(`up: ${redis.url}, MariaDB on port ${db.port}`);
  const secret = randomBytes(12).toString('hex');
  const signingKey = randomBytes(24).toString('hex');

  const running: { code: string; sipPort: number; httpPort: number; cascade: boolean; proc: ServiceProcess }[] = [];
  for (const n of NODES) {
    const started = step(`starting ${n.code}`);
    const proc = await startService({
      name: n.code,
      cwd: ROOT,
      args: tsxArgs(MAIN),
      env: async () => {
        const sipPort = await portOr(n.sip, true);
        const httpPort = await portOr(n.http, false);
        return {
          VMS_GB28181_SIP_HOST: HOST,
          VMS_GB28181_SIP_PORT: String(sipPort),
          VMS_GB28181_SIP_SERVER_ID: SERVER_ID,
          VMS_GB28181_SIP_INSTANCE_ID: n.code,
          VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://${HOST}:${httpPort}`,
          VMS_GB28181_SIP_NODE_FORWARD_SECRET: secret,
          VMS_GB28181_SIP_CASCADE_NODE: String(n.cascade),
          VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '2',
          SERVER_ADDRESS: HOST,
          SERVER_PORT: String(httpPort),
          REDIS_URL: redis.url,
          MYSQL_URL: db.url,
          VMS_AUTH_SIGNING_KEY: signingKey,
          LOG_LEVEL: 'info',
        };
      },
      healthUrl: (env) => `http://${HOST}:${env.SERVER_PORT}/healthz`,
      startTimeoutMs: 60_000,
    });
    follow(n.code, proc);
    started(`healthy: SIP ${proc.env.VMS_GB28181_SIP_PORT}, HTTP ${proc.env.SERVER_PORT}`);
    running.push({ code: n.code, sipPort: Number(proc.env.VMS_GB28181_SIP_PORT), httpPort: Number(proc.env.SERVER_PORT), cascade: n.cascade, proc });
  }

  const token = await signToken({ tenantId: '000000', userId: 'demo', ttlSec: 7 * 24 * 3600 }, signingKey, Date.now());
  // the node table is infrastructure: the operator role only (SPEC SEC-2)
  const operatorToken = await signToken({ tenantId: '000000', userId: 'demo-ops', ttlSec: 7 * 24 * 3600, role: 'operator' }, signingKey, Date.now());
  const a = running[0];
  const b = running[1];
  if (a === undefined || b === undefined) throw new Error('cluster did not start');
  const table = step('waiting for every node in the node table');
  let seenOnline = -1;
  const leader = await waitFor(
    async () => {
      const res = await fetch(`http://${HOST}:${a.httpPort}/vms/nodes`, { headers: { 'Blade-Auth': `bearer ${operatorToken}` } });
      const body = (await res.json()) as { data?: { cascadeLeader?: string; nodes?: { online: boolean }[] } };
      const online = (body.data?.nodes ?? []).filter((x) => x.online).length;
      if (online !== seenOnline) say(`      ${online} of ${running.length} nodes online`);
      seenOnline = online;
      return online === running.length ? (body.data?.cascadeLeader ?? '?') : null;
    },
    { timeoutMs: 20_000, intervalMs: 200, description: 'all nodes online in the node table' },
  );
  table(`${running.length} of ${running.length} online, cascade leader ${leader}`);

  const demoDevices: string[] = [];
  const cameras = step('starting one simulated SIPp camera per node');
  if (!args['no-devices'] && findBinary('sipp') !== undefined) {
    for (const [i, n] of running.entries()) {
      const deviceId = `3402000000132000${String(i + 1).padStart(4, '0')}`;
      runSipp({
        scenario: DEVICE_SCENARIO,
        remote: `${HOST}:${n.sipPort}`,
        localIp: HOST,
        localPort: await freePort({ udp: true, host: HOST }),
        calls: 1,
        transport: 'u1',
        keys: { device_id: deviceId, server_id: SERVER_ID, realm: REALM },
        extraArgs: ['-oocsf', DEVICE_OOC_SCENARIO, '-d', '20000'],
        traceMessages: false,
        timeoutMs: 7 * 24 * 3600 * 1000,
      });
      demoDevices.push(`${deviceId} → ${n.code}`);
    }
    // they register within a keepalive or two: show it rather than leave the operator guessing
    let registered = -1;
    await waitFor(
      async () => {
        const res = await fetch(`http://${HOST}:${a.httpPort}/vms/devices?online=true&size=1`, { headers: { 'Blade-Auth': `bearer ${token}` } });
        const total = ((await res.json()) as { data?: { total?: number } }).data?.total ?? 0;
        if (total !== registered) say(`      ${total} of ${demoDevices.length} cameras registered`);
        registered = total;
        return total >= demoDevices.length;
      },
      { timeoutMs: 30_000, intervalMs: 300, description: 'the simulated cameras registered' },
    ).catch(() => say('      not every camera registered yet: see the nodes\' lines below'));
    cameras(`${registered} of ${demoDevices.length} registered`);
  } else cameras(args['no-devices'] ? 'skipped (--no-devices)' : 'skipped (sipp not installed: npm run setup)');

  const api = (port: number, path: string, method = 'GET', variable = 'TOKEN'): string =>
    `curl -s${method === 'GET' ? '' : ` -X ${method}`} -H "Blade-Auth: bearer $${variable}" 'http://${HOST}:${port}${path}'`;
  const firstDevice = '34020000001320000001';
  say();
  say('================ local GB28181 signaling cluster ================');
  say(`redis   ${redis.url}`);
  say(`mysql   mysql://${db.user}:${db.password}@${db.host}:${db.port}/${db.database}`);
  say();
  say('Point each camera / NVR at ONE node (it becomes the device\'s owner):');
  say(`  SIP server id ${SERVER_ID}, domain ${REALM}, no password, UDP or TCP`);
  for (const n of running) {
    say(`  ${n.code}${n.cascade ? ' (cascade)' : '          '}  SIP ${HOST}:${n.sipPort}    HTTP http://${HOST}:${n.httpPort}`);
  }
  if (demoDevices.length > 0) say(`Simulated cameras (SIPp, answer DeviceInfo): ${demoDevices.join(', ')}`);
  say();
  say('Tokens (any node accepts them): tenant 000000, and the all-tenant operator role');
  say(`  export TOKEN=${token}`);
  say(`  export OPS_TOKEN=${operatorToken}`);
  say();
  say(`Web console (any node): http://${HOST}:${a.httpPort}/console/ (paste OPS_TOKEN)`);
  say();
  say('Try (any node answers for any device; others forward to the owner):');
  say(`  ${api(a.httpPort, '/vms/nodes', 'GET', 'OPS_TOKEN')}`);
  say(`  ${api(b.httpPort, '/vms/devices')}`);
  say(`  ${api(b.httpPort, `/vms/device/info?deviceId=${firstDevice}`)}`);
  say(`  ${api(a.httpPort, `/blade-iot/vms/device/control?deviceId=${firstDevice}&action=guard`, 'POST')}`);
  say();
  say('Ctrl-C stops the nodes, Redis and MariaDB and removes their data.');
  say('==================================================================');
  // Ctrl-C: the harness kills every process it started and removes the temp dirs (test/harness/cleanup.ts).
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`cluster demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  if (err instanceof Error && err.cause !== undefined) process.stderr.write(`cause: ${String((err.cause as Error).message ?? err.cause)}\n`);
  process.exit(1);
});
