// `npm run token -- --tenant T --user U [--operator] [--ttl 3600] [--config FILE]`: prints a token on
// stdout; `--operator` adds the all-tenant role claim (`role: "operator"`, SPEC SEC-2). The signing key comes through the same config loader as the service.
import { parseArgs } from 'node:util';
import { loadConfig, type ConfigIo } from '../config/load.ts';
import { ConfigError } from '../errors/catalog.ts';
import { signToken } from './jwt.ts';
import { TENANT_ID, USER_ID } from './principal.ts';

export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

const USAGE = 'usage: npm run token -- --tenant TENANT --user USER [--operator] [--ttl SECONDS] [--config FILE]\n';
const DEFAULT_TTL_SEC = 3600;

export async function runTokenCommand(argv: readonly string[], env: NodeJS.ProcessEnv, nowMs: number, io?: ConfigIo): Promise<CommandResult> {
  const fail = (message: string, exitCode = 2): CommandResult => ({ exitCode, stdout: '', stderr: `${message}\n${USAGE}` });
  let values: { tenant?: string; user?: string; ttl?: string; config?: string; operator?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { tenant: { type: 'string' }, user: { type: 'string' }, ttl: { type: 'string' }, config: { type: 'string' }, operator: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return fail((err as Error).message);
  }
  if (values.tenant === undefined || !TENANT_ID.test(values.tenant)) return fail('--tenant is required: 1-12 characters of A-Z a-z 0-9 _ -');
  if (values.user === undefined || !USER_ID.test(values.user.trim())) return fail('--user is required: 1-64 characters, no spaces');
  const ttlSec = values.ttl === undefined ? DEFAULT_TTL_SEC : Number(values.ttl);
  if (!Number.isInteger(ttlSec) || ttlSec <= 0) return fail('--ttl must be a positive number of seconds');

  let signingKey: string;
  let warning = '';
  try {
    const config = loadConfig(values.config === undefined ? [] : ['--config', values.config], env, io);
    signingKey = config.auth.signingKey;
    if (config.auth.signingKeySource === 'dev-default') {
      warning = 'WARNING: no signing key configured (vms.auth.signing-key / VMS_AUTH_SIGNING_KEY): signed with the public development key\n';
    }
  } catch (err) {
    if (err instanceof ConfigError) return { exitCode: 2, stdout: '', stderr: `${err.message}\n` };
    throw err;
  }
  const token = await signToken({ tenantId: values.tenant, userId: values.user.trim(), ttlSec, role: values.operator === true ? 'operator' : 'tenant' }, signingKey, nowMs);
  return { exitCode: 0, stdout: `${token}\n`, stderr: warning };
}
