// One instance started the way `npm start` runs it (scripts/start.sh → services/signaling/src/main.ts
// through tsx), on loopback ports the OS picks, with the embedded store in `dataDir`: the platform side of
// the benches that measure it as users run it (keepalive, fleet, memory-per-device, register-storm).
// Each bench adds only what makes its case (a SIP password, REDIS_URL, an instance id, a log level).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startService, tsxArgs, type ServiceProcess } from '@vms/harness';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'services', 'signaling', 'src', 'main.ts');
const REPO = join(dirname(MAIN), '..', '..', '..');

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
