// Waiting for work that may hang (a REGISTER towards a platform that is gone takes Timer F, 32 s):
// shutdown paths wait a bounded time, on the injected clock, and move on.
import type { Clock, TimerHandle } from '@vms/sip';

/** Resolves when `work` settles (either way) or after `ms`, whichever comes first; never rejects. */
export async function settleWithin(clock: Clock, work: Promise<unknown>, ms: number): Promise<void> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = clock.setTimeout(resolve, ms);
  });
  try {
    await Promise.race([work.then(() => undefined, () => undefined), timeout]);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}
