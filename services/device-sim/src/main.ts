// `tsx services/device-sim/src/main.ts --server 127.0.0.1:5060 --server-id 34020000002000000001 ...`
// The only module with side effects: parse flags, start the fleet, close it (unregistering) on a signal.
import { parseCli, USAGE } from './cli.ts';
import { DeviceSimConfigError } from './errors.ts';
import { createDeviceFleet } from './fleet.ts';
import { createJsonLogger } from './logger.ts';

const STATUS_INTERVAL_MS = 10_000;

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof DeviceSimConfigError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (parsed.kind === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const { fleet: fleetOptions, logLevel } = parsed.config;
  const log = createJsonLogger(logLevel, (line) => process.stderr.write(line), { app: 'device-sim' });
  let fleet;
  try {
    fleet = createDeviceFleet({ ...fleetOptions, logger: log });
  } catch (err) {
    if (!(err instanceof DeviceSimConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  const status = setInterval(() => log.info({ registered: fleet.registeredCount(), devices: fleet.devices.length }, 'device-sim status'), STATUS_INTERVAL_MS);
  const shutdown = (signal: NodeJS.Signals): void => {
    log.info({ signal }, 'device-sim shutting down');
    clearInterval(status);
    fleet.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  await fleet.start();
  log.info({ registered: fleet.registeredCount(), devices: fleet.devices.length, channels: fleetOptions.channels }, 'device-sim started');
}

await main();
