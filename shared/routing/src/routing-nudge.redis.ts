/**
 * The Redis pub/sub nudge after a publish or rollback: instances check the version table at once instead
 * of at their next poll. The message is only a hint (the version, as text); receivers always read the
 * store, so a forged or lost message can at worst cause or delay one check.
 */
export const ROUTING_NUDGE_CHANNEL = 'vms:routing:version';
/** Longest message read: a version number. */
const MAX_MESSAGE = 32;

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

/** Calls `onNudge` for each message on the channel; returns the unsubscribe. */
export async function subscribeRoutingNudges(sub: NudgeSubscriber, onNudge: (version: number | undefined) => void): Promise<() => Promise<void>> {
  const listener = (ch: string, message: string): void => {
    if (ch !== ROUTING_NUDGE_CHANNEL) return;
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
