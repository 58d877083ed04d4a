// What the signaling integration tests share: one instance started as a child process exactly as
// `npm run signaling` starts it (zero configuration but ports, a device password and a signing key),
// operator tokens minted from the SPEC §12 contract (HS256, claims user_id / tenant_id / exp), and
// SIPp devices built from the scenarios in test/sipp.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, runSipp, startService, tsxArgs, waitFor, writeInjectionCsv, type ServiceProcess, type SippRun, type SippTransport } from '@vms/harness';

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(HERE, '..', '..');
export const SIPP_DIR = join(HERE, '..', 'sipp');
const MAIN = join(REPO_ROOT, 'services', 'signaling', 'src', 'main.ts');
const SOCKET_ACTIVATE = join(REPO_ROOT, 'scripts', 'socket-activate.py');

export const SERVER_ID = '34020000002000000001';
export const REALM = SERVER_ID.slice(0, 10);
export const PASSWORD = 'gb-device-pw';
export const SIGNING_KEY = 'signaling-integration-key-0123456789abcdef';

export interface Instance {
  readonly proc: ServiceProcess;
  readonly sipPort: number;
  readonly httpUrl: string;
  /** GET/POST on the control API with an operator token; returns the envelope. */
  api<T = unknown>(method: 'GET' | 'POST', path: string): Promise<Envelope<T>>;
  stop(): Promise<void>;
}

export interface Envelope<T> {
  readonly code: number;
  readonly success: boolean;
  readonly msg: string;
  readonly data: T;
}

const b64url = (v: string | Buffer): string => Buffer.from(v).toString('base64url');

/** SPEC §12 operator token: HS256 over `{user_id, tenant_id, exp}` with the configured signing key. */
export function operatorToken(key = SIGNING_KEY, tenantId = '000000'): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ user_id: 'it', tenant_id: tenantId, exp: Math.floor(Date.now() / 1000) + 3600 }));
  const sig = createHmac('sha256', key).update(`${head}.${claims}`).digest('base64url');
  return `${head}.${claims}.${sig}`;
}

/**
 * Starts one instance; `extraEnv` adds e.g. MYSQL_URL. SIP and HTTP ports come from the OS. Without
 * MySQL its embedded store is in a throwaway data directory (removed by `stop`) unless `extraEnv`
 * names one (VMS_DATA_DIR).
 */
/**
 * `sharedSipPort`: started through scripts/socket-activate.py on that port, which hands the instance a
 * SO_REUSEPORT UDP and TCP socket there (LISTEN_FDS), as instances sharing one SIP port are on Node 20.
 */
export async function startInstance(extraEnv: Record<string, string> = {}, o: { readonly sharedSipPort?: number } = {}): Promise<Instance> {
  const ownDataDir = extraEnv['VMS_DATA_DIR'] === undefined ? mkdtempSync(join(tmpdir(), 'vms-signaling-')) : null;
  const shared = o.sharedSipPort;
  const proc = await startService({
    name: 'signaling',
    cwd: REPO_ROOT,
    ...(shared === undefined
      ? { args: tsxArgs(MAIN) }
      : { command: 'python3', args: [SOCKET_ACTIVATE, '127.0.0.1', String(shared), '--', process.execPath, ...tsxArgs(MAIN)] }),
    env: async () => ({
      SERVER_PORT: String(await freePort()),
      SERVER_ADDRESS: '127.0.0.1',
      VMS_GB28181_SIP_HOST: '127.0.0.1',
      VMS_GB28181_SIP_PORT: String(shared ?? (await freePort({ udp: true }))),
      VMS_GB28181_SIP_PASSWORD: PASSWORD,
      VMS_AUTH_SIGNING_KEY: SIGNING_KEY,
      LOG_LEVEL: 'info',
      ...(ownDataDir === null ? {} : { VMS_DATA_DIR: ownDataDir }),
      ...extraEnv,
    }),
    readyLine: /"msg":"signaling instance started"/,
    healthUrl: (env) => `http://127.0.0.1:${env['SERVER_PORT']}/healthz`,
    startTimeoutMs: 30_000,
  });
  const started = /\{[^\n]*"msg":"signaling instance started"[^\n]*\}/.exec(proc.output())?.[0];
  const info = JSON.parse(started ?? '{}') as { sipPort?: number; httpUrl?: string };
  if (info.sipPort === undefined || info.httpUrl === undefined) throw new Error(`no bound ports in the start-up log:\n${proc.output()}`);
  const httpUrl = info.httpUrl;
  const token = operatorToken();
  return {
    proc,
    sipPort: info.sipPort,
    httpUrl,
    async api<T>(method: 'GET' | 'POST', path: string) {
      const res = await fetch(`${httpUrl}${path}`, { method, headers: { 'Blade-Auth': `bearer ${token}` } });
      return (await res.json()) as Envelope<T>;
    },
    async stop() {
      await proc.stop();
      if (ownDataDir !== null) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}

export interface DeviceRunOptions {
  readonly instance: Instance;
  readonly deviceId: string;
  /** Out-of-call scenario answering the platform's MESSAGEs (file in test/sipp). */
  readonly ooc: string;
  readonly transport?: SippTransport;
  readonly password?: string;
  readonly keys?: Readonly<Record<string, string>>;
  /** Milliseconds between keepalives. */
  readonly keepaliveMs?: number;
}

/** A SIPp device: REGISTER with digest, then keepalives until stopped, answering with `ooc`. */
export async function runDevice(o: DeviceRunOptions): Promise<SippRun> {
  return runSipp({
    scenario: join(SIPP_DIR, 'device-register.xml'),
    remote: `127.0.0.1:${o.instance.sipPort}`,
    localPort: await freePort({ udp: true }),
    calls: 1,
    transport: o.transport ?? 'u1',
    injectionFiles: [writeInjectionCsv([[o.deviceId]])],
    keys: { server: SERVER_ID, realm: REALM, device: o.deviceId, ...o.keys },
    timeoutMs: 90_000,
    // SIPp digests `sip:<remote ip>:<port>` unless told; the platform checks the digest uri against the
    // Request-URI (RFC 2617 §3.2.2.5, SPEC SEC-1), as real devices send it (samples 01, 02, 03)
    extraArgs: [
      '-oocsf', join(SIPP_DIR, o.ooc), '-au', o.deviceId, '-ap', o.password ?? PASSWORD, '-auth_uri', `${SERVER_ID}@${REALM}`, '-d', String(o.keepaliveMs ?? 1000),
    ],
  });
}

export interface DeviceView {
  readonly deviceId: string;
  readonly online: boolean;
  readonly transport: string;
  readonly ownerNode: string | null;
  readonly remotePort: number | null;
  readonly keepaliveAt: string | null;
  readonly channelCount: number;
}

/** Waits until the API shows the device online, registered from `localPort` when given. */
export function waitOnline(instance: Instance, deviceId: string, timeoutMs = 15_000): Promise<DeviceView> {
  return waitFor(
    async () => {
      const r = await instance.api<DeviceView>('GET', `/vms/devices/${deviceId}`);
      return r.success && r.data.online ? r.data : null;
    },
    { timeoutMs, intervalMs: 100, description: `device ${deviceId} online` },
  );
}
