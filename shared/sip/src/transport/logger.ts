/**
 * The logging surface the stack needs: pino's shape (object first, constant message second), so a
 * pino logger or any child of it can be passed as is. Libraries never configure the global logger
 * (STYLE §9); without one the stack is silent.
 */
export interface SipLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  child(bindings: Record<string, unknown>): SipLogger;
}

const noop = (): void => {};

export const silentLogger: SipLogger = {
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
};
