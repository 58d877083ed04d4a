// Snapshot pictures on disk under `<data dir>/snapshots/<device id>/`, at most `maxFiles` in all: the
// oldest are deleted past the bound (SPEC SEC-3). File names carry what the listing shows
// (`<stored at ms>-<channel id>-<session id>-<n>.jpg`), so the index is rebuilt from the directory
// at start and nothing else is persisted. Names from requests are matched against that pattern
// before they touch the file system (no path traversal).
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredSnapshot } from './device-commands.port.ts';

const NAME = /^(\d{13})-(\d{20})-([0-9a-f]{32})-(\d{1,3})\.jpg$/;
const DEVICE_DIR = /^\d{20}$/;

export interface SnapshotFiles {
  /** Reads the directory once (absent: nothing kept yet); call before anything else. */
  load(): Promise<void>;
  store(meta: { deviceId: string; channelId: string; sessionId: string; index: number; at: number }, picture: Buffer): Promise<StoredSnapshot>;
  list(deviceId: string): readonly StoredSnapshot[];
  /** The picture, or null when no such file is kept for the device. */
  read(deviceId: string, name: string): Promise<Buffer | null>;
  readonly size: number;
}

export function createSnapshotFiles(o: { dir: string; maxFiles: number }): SnapshotFiles {
  /** Every kept file, oldest first. */
  const index: StoredSnapshot[] = [];
  const pathOf = (s: Pick<StoredSnapshot, 'deviceId' | 'name'>): string => join(o.dir, s.deviceId, s.name);

  const evict = async (): Promise<void> => {
    while (index.length > o.maxFiles) {
      const oldest = index.shift();
      if (oldest !== undefined) await rm(pathOf(oldest), { force: true });
    }
  };

  return {
    async load() {
      let devices: string[];
      try {
        devices = await readdir(o.dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // created with the first picture
        throw err;
      }
      for (const dev of devices) {
        if (!DEVICE_DIR.test(dev)) continue;
        for (const name of await readdir(join(o.dir, dev))) {
          const m = NAME.exec(name);
          if (m === null) continue;
          const size = (await stat(join(o.dir, dev, name))).size;
          index.push({ name, deviceId: dev, channelId: m[2] ?? '', sessionId: m[3] ?? '', size, storedAt: Number(m[1]) });
        }
      }
      index.sort((a, b) => a.storedAt - b.storedAt || a.name.localeCompare(b.name));
      await evict();
    },
    async store(meta, picture) {
      const name = `${String(meta.at).padStart(13, '0')}-${meta.channelId}-${meta.sessionId}-${meta.index}.jpg`;
      const kept: StoredSnapshot = { name, deviceId: meta.deviceId, channelId: meta.channelId, sessionId: meta.sessionId, size: picture.length, storedAt: meta.at };
      await mkdir(join(o.dir, meta.deviceId), { recursive: true });
      const tmp = `${pathOf(kept)}.part`;
      await writeFile(tmp, picture);
      await rename(tmp, pathOf(kept)); // a reader never sees half a picture
      index.push(kept);
      await evict();
      return kept;
    },
    list(deviceId) {
      return index.filter((s) => s.deviceId === deviceId);
    },
    async read(deviceId, name) {
      if (!NAME.test(name) || !index.some((s) => s.deviceId === deviceId && s.name === name)) return null;
      return readFile(join(o.dir, deviceId, name));
    },
    get size() {
      return index.length;
    },
  };
}
