/**
 * The datadir of a harness MariaDB. `mariadb-install-db` costs ~1 s of wall time on an idle 2-core
 * box and 4-7 s when other test files compete for the CPU (it is a shell script running several
 * processes). So the pristine datadir it produces is kept once per machine as a template in
 * os.tmpdir() (`vms-mariadb-template-<hash of binaries, options, uid>`) and copied (~0.1-0.3 s) for
 * every server. The template is a cache, not a server's data: it is never written to and stays
 * between runs. VMS_TEST_MARIADB_TEMPLATE=0 turns it off (fresh install per server).
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnManaged, tail } from './child.ts';
import { registerDir } from './cleanup.ts';

const INSTALL_ARGS = [
  '--auth-root-authentication-method=normal',
  '--skip-test-db',
  '--skip-name-resolve',
  '--skip-log-bin',
  '--innodb-log-file-size=4M',
  '--innodb-doublewrite=0', // 22 MB datadir instead of 78 MB: a faster copy
];

/** mariadbd (and its installer) refuse to run as root unless told to. */
export function rootUserArg(): string[] {
  return process.getuid?.() === 0 ? ['--user=root'] : [];
}

/** Fills `dataDir` (must not exist) with a pristine system schema. */
export async function prepareDataDir(installDb: string, mariadbd: string, dataDir: string): Promise<{ fromTemplate: boolean }> {
  if (process.env.VMS_TEST_MARIADB_TEMPLATE === '0') {
    await install(installDb, dataDir);
    return { fromTemplate: false };
  }
  cpSync(await templateDataDir(installDb, mariadbd), dataDir, { recursive: true });
  return { fromTemplate: true };
}

/** Path of the machine-wide pristine datadir for this binary and these options; built on first use. */
async function templateDataDir(installDb: string, mariadbd: string): Promise<string> {
  const bin = statSync(mariadbd);
  const key = createHash('sha256')
    .update(JSON.stringify([installDb, mariadbd, bin.size, bin.mtimeMs, INSTALL_ARGS, process.getuid?.() ?? -1]))
    .digest('hex')
    .slice(0, 16);
  const template = join(tmpdir(), `vms-mariadb-template-${key}`);
  if (existsSync(template)) return join(template, 'data');
  // Build beside it and rename: the rename is atomic, so a template that exists is complete, and
  // of two test processes racing to build it the loser just drops its copy.
  const build = mkdtempSync(join(tmpdir(), 'vms-mariadb-template-build-'));
  const unregister = registerDir(build);
  try {
    await install(installDb, join(build, 'data'));
    try {
      renameSync(build, template);
    } catch {
      if (!existsSync(template)) throw new Error(`could not publish the MariaDB template at ${template}`);
    }
  } finally {
    unregister();
    rmSync(build, { recursive: true, force: true });
  }
  return join(template, 'data');
}

async function install(bin: string, dataDir: string): Promise<void> {
  const args = ['--no-defaults', `--datadir=${dataDir}`, ...INSTALL_ARGS, ...rootUserArg()];
  const proc = spawnManaged(bin, args, { name: 'mariadb-install-db' });
  const timer = setTimeout(() => proc.signal('SIGKILL'), 60_000);
  const exit = await proc.exited;
  clearTimeout(timer);
  if (exit.code !== 0) throw new Error(`mariadb-install-db failed (${exit.code ?? exit.signal})\n${tail(proc.output())}`);
}

