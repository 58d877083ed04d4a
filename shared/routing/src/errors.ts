/**
 * The routing package's error catalog (STYLE §2): stable codes, transient or not. Stores turn driver errors
 * into these, so an outage of the database never reaches a caller as a raw driver error.
 */
export type RoutingErrorCode =
  | 'ROUTING_ERR_STORE_UNAVAILABLE'
  | 'ROUTING_ERR_STORE_QUERY'
  | 'ROUTING_ERR_CLOSED'
  | 'ROUTING_ERR_NOT_FOUND'
  | 'ROUTING_ERR_NOTHING_TO_ROLL_BACK';

export const ROUTING_ERROR_TRANSIENT: Readonly<Record<RoutingErrorCode, boolean>> = {
  ROUTING_ERR_STORE_UNAVAILABLE: true,
  ROUTING_ERR_STORE_QUERY: false,
  ROUTING_ERR_CLOSED: false,
  ROUTING_ERR_NOT_FOUND: false,
  ROUTING_ERR_NOTHING_TO_ROLL_BACK: false,
};

export class RoutingError extends Error {
  override readonly name = 'RoutingError';
  readonly transient: boolean;

  constructor(
    readonly code: RoutingErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.transient = ROUTING_ERROR_TRANSIENT[code];
  }
}

export function isRoutingError(e: unknown): e is RoutingError {
  return e instanceof RoutingError;
}
