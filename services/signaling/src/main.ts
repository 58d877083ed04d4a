// `npm run signaling [-- --config FILE]`: the only module with side effects.
import { createApp } from './app.ts';
import { loadConfig } from './config/load.ts';
import { ConfigError } from './errors/catalog.ts';
import { exposeCollector } from './memory/heap-release.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
    return;
  }

  // issue 11: the heap is given back after a registration storm (memory/storm-release.ts)
  const collectGarbage = exposeCollector() ?? undefined;
  const app = createApp(config, { collectGarbage });
  const shutdown = (signal: NodeJS.Signals): void => {
    process.stderr.write(`${signal}: shutting down\n`);
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);

  try {
    await app.start();
  } catch (err) {
    process.stderr.write(`start failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await app.close();
    process.exitCode = 1;
  }
}

await main();
