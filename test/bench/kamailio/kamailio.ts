// Kamailio 5.6 (Debian `kamailio`) as the anchor of test/bench/fleet.ts: kamailio-baseline.cfg on
// 127.0.0.1 (stateless 200 for MESSAGE, registrar + in-memory usrloc for REGISTER, fixed-password
// digest with `auth`), 2 children, the `fm` memory manager (this Debian build defaults to `qm`, ~4× the
// CPU), in the foreground (-DD) so the harness owns its process group. Port of the original kam.sh.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, requireBinaryIn, spawnManaged, tmpDir, waitFor, type ManagedProcess } from '@vms/harness';
import { processTree } from './proc.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
export const KAMAILIO_PASSWORD = '12345678'; // BENCH_PASSWORD in the cfg

export interface Kamailio {
  readonly port: number;
  /** The main process and its workers. */
  pids(): number[];
  output(): string;
  stop(): Promise<void>;
}

/** The command line of a Kamailio on a free loopback port, for a caller that spawns it itself (under valgrind). */
export interface KamailioCommand {
  readonly bin: string;
  readonly args: readonly string[];
  readonly port: number;
  /** Removes its pid file and ctl socket directory. */
  cleanup(): void;
}

export async function startKamailioCommand(opts: { readonly children?: number; readonly auth: boolean }): Promise<KamailioCommand> {
  const bin = requireBinaryIn(['/usr/sbin', '/usr/local/sbin', '/usr/bin'], 'kamailio', ['kamailio']);
  const dir = tmpDir('vms-kamailio-');
  const port = await freePort({ udp: true });
  const args = [
    '-f', join(HERE, 'kamailio-baseline.cfg'),
    '-DD', '-E', '-m', '512', '-M', '8', '-n', String(opts.children ?? 2), '-x', 'fm',
    '-P', join(dir.path, 'kamailio.pid'),
    '-A', `BENCH_LISTEN=udp:127.0.0.1:${port}`,
    '-A', `BENCH_CTL="unix:${join(dir.path, 'kamailio_ctl')}"`,
    ...(opts.auth ? ['-A', 'WITH_AUTH'] : []),
  ];
  return { bin, args, port, cleanup: () => dir.remove() };
}

export async function startKamailio(opts: { readonly children?: number; readonly auth: boolean }): Promise<Kamailio> {
  const { bin, args, port, cleanup } = await startKamailioCommand(opts);
  const proc: ManagedProcess = spawnManaged(bin, args, { name: 'kamailio' });
  const pid = proc.pid;
  if (pid === undefined) throw new Error('kamailio did not start');
  // ready when its workers are forked (2 UDP children + timer, ctl, … processes)
  await waitFor(() => proc.isRunning() && processTree(pid).length > (opts.children ?? 2), { timeoutMs: 10_000, intervalMs: 100 }).catch((err: unknown) => {
    throw new Error(`kamailio did not start:\n${proc.output().slice(-2000)}`, { cause: err });
  });
  await new Promise((r) => setTimeout(r, 500));
  return {
    port,
    pids: () => processTree(pid),
    output: () => proc.output(),
    async stop() {
      await proc.stop({ timeoutMs: 10_000 });
      cleanup();
    },
  };
}
