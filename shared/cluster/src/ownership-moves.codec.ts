/**
 * OWN-4 move notices as the claim script publishes them (ownership.redis.ts):
 * `["<new owner>", ["<key>", "<previous owner>", …]]`, keys `<prefix>{<deviceId>}`. Anyone who can
 * publish on the channel can send anything: a message that is not exactly this shape, or larger than
 * any script would publish, yields no move, never an exception.
 */
import type { OwnershipMove } from './ownership.port.ts';

/** A script announces at most one chunk (500 keys) of ≤ 1 KB keys and owners. */
export const MAX_MOVE_NOTICE_BYTES = 1 << 20;
const MAX_MOVES_PER_NOTICE = 1000;

export function decodeOwnershipMoves(message: string, keyPrefix: string): OwnershipMove[] {
  if (message.length > MAX_MOVE_NOTICE_BYTES) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return [];
  const [newOwner, pairs] = parsed as unknown[];
  if (typeof newOwner !== 'string' || newOwner === '' || !Array.isArray(pairs) || pairs.length % 2 !== 0 || pairs.length > 2 * MAX_MOVES_PER_NOTICE) return [];
  const moves: OwnershipMove[] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const key: unknown = pairs[i];
    const previousOwner: unknown = pairs[i + 1];
    if (typeof key !== 'string' || typeof previousOwner !== 'string' || previousOwner === '') continue;
    if (!key.startsWith(`${keyPrefix}{`) || !key.endsWith('}') || key.length < keyPrefix.length + 3) continue;
    moves.push({ deviceId: key.slice(keyPrefix.length + 1, -1), newOwner, previousOwner });
  }
  return moves;
}
