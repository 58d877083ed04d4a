// Snapshot pictures on disk: at most maxFiles kept (oldest deleted, on disk too), the index rebuilt
// from the directory after a restart, and names from requests never leave the device's folder.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSnapshotFiles } from './snapshot-files.fs.ts';

const DEV = '34020000001320000001';
const CH = '34020000001310000001';
const SESSION = 'a'.repeat(32);

describe('snapshot files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vms-snapshots-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the newest maxFiles, deletes the oldest from disk, and finds them again after a restart', async () => {
    const files = createSnapshotFiles({ dir, maxFiles: 2 });
    await files.load();
    const stored = [];
    for (let i = 1; i <= 3; i++) stored.push(await files.store({ deviceId: DEV, channelId: CH, sessionId: SESSION, index: i, at: 1_700_000_000_000 + i }, Buffer.from([0xff, 0xd8, 0xff, i])));
    assert.deepEqual(files.list(DEV).map((s) => s.name), [stored[1]?.name, stored[2]?.name]);
    assert.equal(existsSync(join(dir, DEV, stored[0]?.name ?? '')), false, 'the evicted picture is gone from disk');
    assert.deepEqual(await files.read(DEV, stored[2]?.name ?? ''), Buffer.from([0xff, 0xd8, 0xff, 3]));

    writeFileSync(join(dir, DEV, 'not-ours.txt'), 'x');
    const again = createSnapshotFiles({ dir, maxFiles: 1 });
    await again.load();
    assert.deepEqual(again.list(DEV).map((s) => [s.name, s.channelId, s.sessionId, s.size]), [[stored[2]?.name, CH, SESSION, 4]]);
  });

  it('reads only names it keeps for that device', async () => {
    const files = createSnapshotFiles({ dir, maxFiles: 10 });
    await files.load();
    const kept = files.list(DEV)[0]?.name ?? '';
    assert.equal(await files.read('34020000001320000002', kept), null, 'another device’s folder');
    assert.equal(await files.read(DEV, '../vms.sqlite'), null);
    assert.equal(await files.read(DEV, 'not-ours.txt'), null);
  });

  it('an absent directory is an empty store, created with the first picture', async () => {
    const fresh = join(dir, 'fresh');
    const files = createSnapshotFiles({ dir: fresh, maxFiles: 10 });
    await files.load();
    assert.equal(files.size, 0);
    assert.equal(existsSync(fresh), false);
  });
});
