// A missing server binary is a named failure that says how to install it, never a skip: the suites
// that need redis-server, mariadbd or SIPp reach them through requireBinary.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { binarySearchDirs, findBinaryIn, MissingBinaryError, requireBinaryIn, tmpDir } from './index.ts';

describe('requireBinaryIn', () => {
  const dir = tmpDir('vms-binaries-');
  after(() => dir.remove());

  it('throws MissingBinaryError naming the binary, its Debian package and `npm run setup` when no directory has it', () => {
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    assert.throws(
      () => requireBinaryIn([empty], 'sip-tester', ['sipp']),
      (err: unknown) =>
        err instanceof MissingBinaryError &&
        err.code === 'HARNESS_ERR_MISSING_BINARY' &&
        err.debianPackage === 'sip-tester' &&
        err.message.startsWith('sipp not found') &&
        err.message.includes('sip-tester') &&
        err.message.includes('npm run setup') &&
        err.message.includes(empty),
    );
  });

  it('finds an executable file, and not a file without the execute bit or a directory of that name', () => {
    const bin = join(dir.path, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'mariadbd'), '#!/bin/sh\n');
    mkdirSync(join(bin, 'mysqld'));
    assert.equal(findBinaryIn([bin], ['mariadbd', 'mysqld']), undefined);
    assert.throws(() => requireBinaryIn([bin], 'mariadb-server', ['mariadbd', 'mysqld']), /mariadbd \/ mysqld not found.*mariadb-server/);
    chmodSync(join(bin, 'mariadbd'), 0o755);
    assert.equal(requireBinaryIn([bin], 'mariadb-server', ['mariadbd', 'mysqld']), join(bin, 'mariadbd'));
  });

  it('searches PATH first, then the sbin and bin directories a non-root PATH lacks', () => {
    const dirs = binarySearchDirs('/opt/a:/opt/b:/usr/bin');
    assert.deepEqual(dirs.slice(0, 3), ['/opt/a', '/opt/b', '/usr/bin']);
    assert.ok(dirs.includes('/usr/sbin'));
    assert.equal(dirs.filter((d) => d === '/usr/bin').length, 1);
  });
});
