import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/config.types.ts';

/** Header values that must never reach a log line. */
const REDACT = ['req.headers["blade-auth"]', 'req.headers.authorization', 'req.headers["x-vms-forward-secret"]'];

/** The service's root logger; everything else logs through `.child({ deviceId, callId, … })`. */
export function createLogger(level: LogLevel, instanceId: string, destination?: DestinationStream): Logger {
  const options = { level, base: { instanceId }, redact: REDACT };
  return destination === undefined ? pino(options) : pino(options, destination);
}
