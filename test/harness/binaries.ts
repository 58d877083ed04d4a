/**
 * Finds the Debian server binaries the harness drives. Daemons such as `mariadbd` live in /usr/sbin,
 * which is not on a non-root PATH, so the sbin directories are searched as well.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin', '/usr/local/bin', '/usr/bin'];

/** Absolute path of the first name found, or undefined. */
export function findBinary(...names: string[]): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter((d) => d !== ''), ...EXTRA_DIRS];
  for (const name of names) {
    for (const dir of dirs) {
      const full = join(dir, name);
      try {
        accessSync(full, constants.X_OK);
        return full;
      } catch {
        // keep looking
      }
    }
  }
  return undefined;
}

/** Like findBinary but throws a message that says how to get the binary. */
export function requireBinary(pkg: string, ...names: string[]): string {
  const found = findBinary(...names);
  if (found === undefined) {
    throw new Error(`${names.join(' / ')} not found: install the Debian package ${pkg} (scripts/setup.sh does)`);
  }
  return found;
}

export function redisAvailable(): boolean {
  return findBinary('redis-server') !== undefined && findBinary('redis-cli') !== undefined;
}

export function mariaDbAvailable(): boolean {
  return findBinary('mariadbd', 'mysqld') !== undefined && findBinary('mariadb-install-db', 'mysql_install_db') !== undefined;
}

export function sippAvailable(): boolean {
  return findBinary('sipp') !== undefined;
}
