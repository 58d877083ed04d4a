// A JSON-lines logger of pino's shape (the SipLogger interface) for the CLI: the library itself only
// logs through the logger it is given (STYLE 9).
import type { SipLogger } from '@vms/sip';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createJsonLogger(level: LogLevel, write: (line: string) => void, bindings: Record<string, unknown> = {}): SipLogger {
  const rank = LOG_LEVELS.indexOf(level);
  const at =
    (lvl: Exclude<LogLevel, 'silent'>) =>
    (obj: object, msg: string): void => {
      if (LOG_LEVELS.indexOf(lvl) < rank) return;
      write(`${JSON.stringify({ level: lvl, time: new Date().toISOString(), ...bindings, ...serialisable(obj), msg })}\n`);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => createJsonLogger(level, write, { ...bindings, ...more }),
  };
}

/** Errors do not survive JSON.stringify: keep their code, name and message. */
function serialisable(obj: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, code: (v as { code?: unknown }).code } : v;
  }
  return out;
}
