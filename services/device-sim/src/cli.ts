// Command line of the simulator (main.ts): flags → DeviceFleetOptions, every bad flag reported at once.
import { parseArgs } from 'node:util';
import type { ManscdpCharset } from '@vms/gb28181';
import { DeviceSimConfigError } from './errors.ts';
import type { DeviceFleetOptions } from './fleet.ts';
import { LOG_LEVELS, type LogLevel } from './logger.ts';

export const USAGE = `Usage: tsx services/device-sim/src/main.ts --server HOST:PORT [--server-id ID] [options]

  --server HOST:PORT       platform SIP address (required)
  --server-id ID           20-digit SIP server id (default 34020000002000000001, the platform's own
                           default); the domain is its first 10 digits
  --domain DOMAIN          SIP domain / digest realm (default: from --server-id)
  --device-id ID           first device id (default 34020000001320000001)
  --password PASSWORD      digest password (default 12345678)
  --count N                devices, consecutive ids (default 1)
  --channels N             channels per device (default 1)
  --transport udp|tcp      SIP transport (default udp)
  --local-host ADDRESS     address to bind and announce (default 127.0.0.1)
  --charset GB2312|UTF-8   MANSCDP charset (default GB2312)
  --gb-version 2016|2022   GB/T 28181 revision announced (X-GB-ver) and answered (default 2022)
  --keepalive SECONDS      keepalive interval (default 60)
  --expires SECONDS        REGISTER expiry (default 3600)
  --follow-redirect        follow a 302 to the shard it names, back to --server on a 403 (2022 §9.1.2.3)
  --catalog-page-size N    catalog items per MESSAGE (default 10)
  --fps N                  video frames per second (default 25)
  --concurrency N          devices starting at once (default 50)
  --log-level LEVEL        debug|info|warn|error|silent (default info)
  --help
`;

export interface CliConfig {
  fleet: DeviceFleetOptions;
  logLevel: LogLevel;
}

export type CliResult = { kind: 'help' } | { kind: 'run'; config: CliConfig };

const DEFAULT_DEVICE_ID = '34020000001320000001';
/** The signaling platform's default `server-id`: a simulator pointed at `npm start` needs no id. */
const DEFAULT_SERVER_ID = '34020000002000000001';
const DEFAULT_PASSWORD = '12345678';

export function parseCli(argv: readonly string[]): CliResult {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: 'string' },
        'server-id': { type: 'string' },
        domain: { type: 'string' },
        'device-id': { type: 'string' },
        password: { type: 'string' },
        count: { type: 'string' },
        channels: { type: 'string' },
        transport: { type: 'string' },
        'local-host': { type: 'string' },
        charset: { type: 'string' },
        'gb-version': { type: 'string' },
        keepalive: { type: 'string' },
        expires: { type: 'string' },
        'catalog-page-size': { type: 'string' },
        fps: { type: 'string' },
        concurrency: { type: 'string' },
        'log-level': { type: 'string' },
        'follow-redirect': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new DeviceSimConfigError([err instanceof Error ? err.message : String(err)]);
  }
  if (values['help'] === true) return { kind: 'help' };
  const issues: string[] = [];
  const str = (name: string): string | undefined => values[name] as string | undefined;
  const int = (name: string, min: number, def?: number): number | undefined => {
    const raw = str(name);
    if (raw === undefined) return def;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min) {
      issues.push(`--${name}: must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
      return def;
    }
    return n;
  };

  const server = str('server');
  const m = server === undefined ? null : /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(server);
  if (server === undefined) issues.push('--server: required (HOST:PORT)');
  else if (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535) issues.push(`--server: HOST:PORT expected, got ${JSON.stringify(server)}`);
  const serverId = str('server-id') ?? DEFAULT_SERVER_ID;
  const transport = str('transport') ?? 'udp';
  if (transport !== 'udp' && transport !== 'tcp') issues.push(`--transport: udp or tcp, got ${JSON.stringify(transport)}`);
  const charsetRaw = (str('charset') ?? 'GB2312').toUpperCase();
  const charset = (charsetRaw === 'UTF8' ? 'UTF-8' : charsetRaw) as ManscdpCharset;
  if (!['GB2312', 'GBK', 'GB18030', 'UTF-8'].includes(charset)) issues.push(`--charset: GB2312, GBK, GB18030 or UTF-8, got ${JSON.stringify(charsetRaw)}`);
  const gbVersion = str('gb-version') ?? '2022';
  if (gbVersion !== '2016' && gbVersion !== '2022') issues.push(`--gb-version: 2016 or 2022, got ${JSON.stringify(gbVersion)}`);
  const logLevel = (str('log-level') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) issues.push(`--log-level: one of ${LOG_LEVELS.join(', ')}`);

  const fleet: DeviceFleetOptions = {
    server: { host: m?.[1]?.replace(/^\[|\]$/g, '') ?? '', port: Number(m?.[2] ?? 0), id: serverId },
    firstDeviceId: str('device-id') ?? DEFAULT_DEVICE_ID,
    password: str('password') ?? DEFAULT_PASSWORD,
    count: int('count', 1, 1) ?? 1,
    channels: int('channels', 1, 1),
    transport: transport === 'tcp' ? 'tcp' : 'udp',
    localHost: str('local-host') ?? '127.0.0.1',
    charset,
    gbVersion: gbVersion === '2016' ? '2016' : '2022',
    keepaliveIntervalS: int('keepalive', 1),
    registerExpiresS: int('expires', 1),
    catalogPageSize: int('catalog-page-size', 1),
    fps: int('fps', 1),
    startConcurrency: int('concurrency', 1),
    followRedirect: values['follow-redirect'] === true,
  };

  const domain = str('domain');
  if (domain !== undefined) fleet.server.domain = domain;
  if (issues.length > 0) throw new DeviceSimConfigError(issues);
  return { kind: 'run', config: { fleet, logLevel } };
}
