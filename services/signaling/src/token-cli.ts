// Entry point of `npm run token` (see auth/token-command.ts).
import { runTokenCommand } from './auth/token-command.ts';

const result = await runTokenCommand(process.argv.slice(2), process.env, Date.now());
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.exitCode;
