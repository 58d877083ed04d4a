// Where the operator CLIs (bulk import, catalog sync) send their calls and with which token: --url,
// else http://127.0.0.1:<configured HTTP port>; --token, else VMS_TOKEN, else an operator token signed
// with the configured key (as `npm run token -- --operator` does).
import { signToken } from '../auth/jwt.ts';
import { loadConfig, type ConfigIo } from '../config/load.ts';
import { ConfigError } from '../errors/catalog.ts';

export interface ApiTarget {
  readonly base: string;
  readonly token: string;
}

/** The target, or a usage problem (text). */
export async function resolveTarget(
  values: { readonly url?: string | undefined; readonly token?: string | undefined; readonly config?: string | undefined },
  env: NodeJS.ProcessEnv,
  io: { err(text: string): void; now(): number; readonly config?: ConfigIo },
  userId: string,
): Promise<ApiTarget | string> {
  let base: string;
  let token: string;
  try {
    const fromEnv = env['VMS_TOKEN'] === '' ? undefined : env['VMS_TOKEN'];
    const given = values.token ?? fromEnv;
    const needConfig = values.url === undefined || given === undefined;
    const config = needConfig ? loadConfig(values.config === undefined ? [] : ['--config', values.config], env, io.config) : null;
    base = (values.url ?? `http://127.0.0.1:${config?.http.port ?? 18080}`).replace(/\/+$/, '');
    if (given !== undefined) token = given.replace(/^bearer\s+/i, '');
    else {
      if (config === null) throw new Error('unreachable: config loaded when no token is given');
      if (config.auth.signingKeySource === 'dev-default') io.err('WARNING: no signing key configured: the token is signed with the public development key\n');
      token = await signToken({ tenantId: '000000', userId, ttlSec: 3600, role: 'operator' }, config.auth.signingKey, io.now());
    }
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  try {
    new URL(base);
  } catch {
    return `--url is not a URL: ${base}`;
  }
  return { base, token };
}
