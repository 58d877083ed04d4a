// One instance started the way `npm start` runs it (scripts/start.sh → services/signaling/src/main.ts
// through tsx), on loopback ports the OS picks, with the embedded store in `dataDir`: the platform side of
// the benches that measure it as users run it (keepalive, fleet, memory-per-device, register-storm).
// Each bench adds only what makes its case (a SIP password, REDIS_URL, an instance id, a log level).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startService, tsxArgs, type ServiceProcess } from '@vms/harness';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'services', 'signaling', 'src', 'main.ts');
const REPO = join(dirname(MAIN), '..', '..', '..');
const SOCKET_ACTIVATE = join(REPO, 'scripts', 'socket-activate.py');

export interface BenchPlatformOptions {
  readonly name: string;
  /** The embedded store's directory (VMS_DATA_DIR). */
  readonly dataDir: string;
  /** Settings beside the loopback ports; an undefined value is left unset. */
  readonly env: Record<string, string | undefined>;
  /** Node options before the tsx arguments (e.g. --heapsnapshot-signal). */
  readonly nodeArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

export function startBenchPlatform(o: BenchPlatformOptions): Promise<ServiceProcess> {
  return startService({
    name: o.name,
    cwd: REPO,
    args: [...(o.nodeArgs ?? []), ...tsxArgs(MAIN)],
    env: async () => ({
      SERVER_PORT: String(await freePort()),
      SERVER_ADDRESS: '127.0.0.1',
      VMS_GB28181_SIP_HOST: '127.0.0.1',
      VMS_GB28181_SIP_PORT: String(await freePort({ udp: true })),
      MYSQL_URL: '',
      REDIS_URL: '',
      VMS_DATA_DIR: o.dataDir,
      ...o.env,
    }),
    healthUrl: (env) => `http://127.0.0.1:${env['SERVER_PORT']}/healthz`,
    startTimeoutMs: o.startTimeoutMs ?? 30_000,
  });
}

export interface SharedPortPlatformOptions extends Omit<BenchPlatformOptions, 'dataDir'> {
  /** Each instance's own embedded store (VMS_DATA_DIR), by index: instances never share one. */
  readonly dataDir: (instance: number) => string;
}

export interface SharedPortPlatforms {
  /** The SIP port (UDP and TCP on 127.0.0.1) every instance listens on. */
  readonly port: number;
  readonly instances: readonly ServiceProcess[];
  stop(): Promise<void>;
}

/**
 * `count` instances sharing one SIP port (SO_REUSEPORT), each started through
 * scripts/socket-activate.py, which binds the shared sockets, passes them as LISTEN_FDS and execs node:
 * each ServiceProcess's pid is the instance's node process. Each instance gets its own instance id
 * (`<name>-<index>`), data directory and HTTP port; VMS_GB28181_SIP_PORT is the shared port. The
 * kernel spreads datagrams over the instances by source address and port.
 */
export async function startSharedPortPlatforms(count: number, o: SharedPortPlatformOptions): Promise<SharedPortPlatforms> {
  let lastError: unknown;
  // a port taken between freePort() and the first bind makes the first instance exit: try another port
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort({ udp: true });
    const instances: ServiceProcess[] = [];
    const stop = async (): Promise<void> => {
      await Promise.all(instances.map((i) => i.stop()));
    };
    try {
      for (let i = 0; i < count; i++) {
        instances.push(
          await startService({
            name: `${o.name}-${i}`,
            cwd: REPO,
            command: 'python3',
            args: [SOCKET_ACTIVATE, '127.0.0.1', String(port), '--', process.execPath, ...(o.nodeArgs ?? []), ...tsxArgs(MAIN)],
            env: async () => ({
              SERVER_PORT: String(await freePort()),
              SERVER_ADDRESS: '127.0.0.1',
              VMS_GB28181_SIP_HOST: '127.0.0.1',
              MYSQL_URL: '',
              REDIS_URL: '',
              ...o.env,
              VMS_GB28181_SIP_PORT: String(port),
              VMS_GB28181_SIP_INSTANCE_ID: `${o.name}-${i}`,
              VMS_DATA_DIR: o.dataDir(i),
            }),
            healthUrl: (env) => `http://127.0.0.1:${env['SERVER_PORT']}/healthz`,
            startTimeoutMs: o.startTimeoutMs ?? 30_000,
            attempts: 1,
          }),
        );
      }
      return { port, instances, stop };
    } catch (err) {
      lastError = err;
      await stop();
    }
  }
  throw lastError;
}
