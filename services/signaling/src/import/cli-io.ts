// What the operator CLIs (`npm run import`, `npm run catalog-sync`) take from the process: the HTTP client,
// a progress stream on stderr, the clock. One place, so both report progress the same way.
import { setTimeout as sleep } from 'node:timers/promises';

export const processCliIo = {
  fetch,
  err: (text: string): void => void process.stderr.write(text),
  tty: process.stderr.isTTY === true,
  now: (): number => Date.now(),
  sleep: async (ms: number): Promise<void> => {
    await sleep(ms);
  },
};
