// Entry point of `npm run catalog-sync -- DEVICE_ID` (see import/catalog-command.ts).
import { runCatalogSync } from './import/catalog-command.ts';
import { processCliIo } from './import/cli-io.ts';

const result = await runCatalogSync(process.argv.slice(2), process.env, processCliIo);
process.stdout.write(result.stdout);
process.exitCode = result.exitCode;
