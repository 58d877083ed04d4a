/**
 * The Redis pub/sub nudge after a publish or rollback: instances check the version table at once instead
 * of at their next poll. The message is only a hint (the version, as text); receivers always read the
 * store, so a forged or lost message can at worst cause or delay one check.
 *
 * A second hint comes earlier, while a publish is still copying its rules (`warm:<rules>`, sent once the
 * draft has validated): a version that large is coming, so a receiver starts and warms its build thread
 * (table-worker.ts `warm`) before the version is there to read, and the build that follows the nudge pays
 * no thread start (docs/routing.md). At worst a forged one starts a thread that idles out. An instance
 * that predates it reads it as a nudge without a version: one check more, which finds nothing new.
 */
export const ROUTING_NUDGE_CHANNEL = 'vms:routing:version';
/** Longest message read: a version number, or the prepare hint. */
const MAX_MESSAGE = 32;
const PREPARE = 'warm:';

export interface NudgePublisher {
  publish(channel: string, message: string): Promise<number>;
}

/** A subscriber connection (ioredis in subscriber mode). */
export interface NudgeSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

export async function publishRoutingNudge(redis: NudgePublisher, version: number): Promise<void> {
  await redis.publish(ROUTING_NUDGE_CHANNEL, String(version));
}

/** A version of `ruleCount` rules is being published (before its commit): receivers may warm their build thread. */
export async function publishRoutingPrepare(redis: NudgePublisher, ruleCount: number): Promise<void> {
  await redis.publish(ROUTING_NUDGE_CHANNEL, `${PREPARE}${Math.max(0, Math.floor(ruleCount))}`);
}

/**
 * Calls `onNudge` for each nudge on the channel, `onPrepare` for each prepare hint (a nudge to an instance
 * given no onPrepare); returns the unsubscribe.
 */
export async function subscribeRoutingNudges(
  sub: NudgeSubscriber,
  onNudge: (version: number | undefined) => void,
  onPrepare?: (ruleCount: number) => void,
): Promise<() => Promise<void>> {
  const listener = (ch: string, message: string): void => {
    if (ch !== ROUTING_NUDGE_CHANNEL) return;
    if (onPrepare !== undefined && message.length <= MAX_MESSAGE && message.startsWith(PREPARE) && /^\d+$/.test(message.slice(PREPARE.length))) {
      return onPrepare(Number(message.slice(PREPARE.length)));
    }
    const v = message.length <= MAX_MESSAGE && /^\d+$/.test(message) ? Number(message) : undefined;
    onNudge(v);
  };
  sub.on('message', listener);
  await sub.subscribe(ROUTING_NUDGE_CHANNEL);
  return async () => {
    sub.off('message', listener);
    await sub.unsubscribe(ROUTING_NUDGE_CHANNEL);
  };
}
