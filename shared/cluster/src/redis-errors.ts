/**
 * Maps whatever ioredis throws to the catalog. Anything that is not a server reply (socket closed,
 * offline queue disabled, command timeout, cluster not ready) means "Redis unreachable right now".
 * A server reply is a command error unless its Redis error code (the reply's first word, part of the
 * protocol) says the server is temporarily unable to serve.
 */
import { ReplyError } from 'ioredis';
import { ClusterError, OwnershipCommandError, OwnershipUnavailableError } from './errors.ts';

// MOVED/ASK reach us only when ioredis could not follow the redirect (target node down, cluster
// reshaping): an availability problem, not a bad command.
const UNAVAILABLE_REPLY_CODES = new Set(['CLUSTERDOWN', 'LOADING', 'MASTERDOWN', 'TRYAGAIN', 'READONLY', 'BUSY', 'MOVED', 'ASK']);

export function toOwnershipError(err: unknown, what: string): ClusterError {
  if (err instanceof ClusterError) return err;
  if (err instanceof (ReplyError as new (...args: never[]) => Error)) {
    const replyCode = err.message.split(' ', 1)[0] ?? '';
    if (UNAVAILABLE_REPLY_CODES.has(replyCode)) return new OwnershipUnavailableError(`${what}: Redis ${replyCode}`, { cause: err });
    return new OwnershipCommandError(`${what}: Redis rejected the command`, { cause: err });
  }
  return new OwnershipUnavailableError(`${what}: Redis unavailable`, { cause: err });
}
