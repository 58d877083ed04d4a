import { createHash } from 'node:crypto';

/**
 * The development signing key used when `vms.auth.signing-key` is unset. Stable across restarts and
 * identical on every instance with the same server id, so tokens keep working in a dev cluster; it is
 * public knowledge, so start-up warns loudly (see `app.ts`, `token-cli.ts`).
 */
export function devSigningKey(serverId: string): string {
  return createHash('sha256').update(`vms-dev-signing-key:${serverId}`).digest('hex');
}

/** RFC 7518 §3.2: an HS256 key must be at least as long as the hash output (256 bits). */
export const MIN_SIGNING_KEY_BYTES = 32;
