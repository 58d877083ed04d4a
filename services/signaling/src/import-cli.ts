// Entry point of `npm run import -- devices.csv` (see import/import-command.ts).
import { readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { runImport } from './import/import-command.ts';

const MAX_FILE_BYTES = 256 * 1024 * 1024;

const result = await runImport(process.argv.slice(2), process.env, {
  readFile: async (path) => {
    // a million rows of the longest lines fit; a larger file is not a device list
    if ((await stat(path)).size > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
    return readFile(path, 'utf8');
  },
  fetch,
  err: (text) => process.stderr.write(text),
  tty: process.stderr.isTTY === true,
  now: () => Date.now(),
  sleep: async (ms) => {
    await sleep(ms);
  },
});
process.stdout.write(result.stdout);
process.exitCode = result.exitCode;
