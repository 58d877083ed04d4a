// Entry point of `npm run catalog-sync -- DEVICE_ID` (see import/catalog-command.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { runCatalogSync } from './import/catalog-command.ts';

const result = await runCatalogSync(process.argv.slice(2), process.env, {
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
