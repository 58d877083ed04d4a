/**
 * Finds the Debian server binaries the harness drives. Daemons such as `mariadbd` live in /usr/sbin,
 * which is not on a non-root PATH, so the sbin directories are searched as well.
 *
 * A missing binary is an error, never a reason to skip: `npm test` installs them (scripts/setup.sh),
 * and a suite that skipped itself would let a machine without them report green.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin', '/usr/local/bin', '/usr/bin'];

/** A binary the tests need is not installed; names it, its Debian package and the command that installs it. */
export class MissingBinaryError extends Error {
  readonly code = 'HARNESS_ERR_MISSING_BINARY';
  constructor(
    readonly names: readonly string[],
    readonly debianPackage: string,
    readonly searched: readonly string[],
  ) {
    super(
      `${names.join(' / ')} not found (searched ${searched.join(delimiter)}): install the Debian package ` +
        `${debianPackage} with \`npm run setup\` (scripts/setup.sh; \`npm test\` runs it first)`,
    );
    this.name = 'MissingBinaryError';
  }
}

/** Directories searched: PATH, then the sbin and bin directories Debian installs servers into. */
export function binarySearchDirs(path: string = process.env.PATH ?? ''): string[] {
  return [...new Set([...path.split(delimiter).filter((d) => d !== ''), ...EXTRA_DIRS])];
}

/** Absolute path of the first of `names` found executable in `dirs`, or undefined. */
export function findBinaryIn(dirs: readonly string[], names: readonly string[]): string | undefined {
  for (const name of names) {
    for (const dir of dirs) {
      const full = join(dir, name);
      try {
        accessSync(full, constants.X_OK);
        if (statSync(full).isFile()) return full;
      } catch {
        // keep looking
      }
    }
  }
  return undefined;
}

/** Absolute path of the first name found, or undefined. */
export function findBinary(...names: string[]): string | undefined {
  return findBinaryIn(binarySearchDirs(), names);
}

/** Like findBinaryIn but throws MissingBinaryError, which says how to get the binary. */
export function requireBinaryIn(dirs: readonly string[], debianPackage: string, names: readonly string[]): string {
  const found = findBinaryIn(dirs, names);
  if (found === undefined) throw new MissingBinaryError(names, debianPackage, dirs);
  return found;
}

/** Like findBinary but throws MissingBinaryError, which says how to get the binary. */
export function requireBinary(debianPackage: string, ...names: string[]): string {
  return requireBinaryIn(binarySearchDirs(), debianPackage, names);
}
