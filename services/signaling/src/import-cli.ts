// Entry point of `npm run import -- devices.csv` (see import/import-command.ts).
import { readFile, stat } from 'node:fs/promises';
import { processCliIo } from './import/cli-io.ts';
import { runImport } from './import/import-command.ts';

const MAX_FILE_BYTES = 256 * 1024 * 1024;

const result = await runImport(process.argv.slice(2), process.env, {
  readFile: async (path) => {
    // a million rows of the longest lines fit; a larger file is not a device list
    if ((await stat(path)).size > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
    return readFile(path, 'utf8');
  },
  ...processCliIo,
});
process.stdout.write(result.stdout);
process.exitCode = result.exitCode;
