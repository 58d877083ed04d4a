// A tiny upstream GB28181 platform for the cascade end-to-end tests, built on @vms/sip in the test
// process: answers REGISTER (no challenge: the platform record carries no password) and Keepalive
// MESSAGEs with 200, and records every request with the address it came from, so a test can tell
// which signaling instance sent it (each instance sends from its own SIP port).
import { join } from 'node:path';
import { createMysqlPlatformRepository, upstreamPlatform, type PlatformRepository } from '@vms/cascade';
import { createMysqlPool, migrate } from '@vms/cluster';
import { createSipStack, type SipRequest, type SipStack } from '@vms/sip';
import { REPO_ROOT, SERVER_ID, type Stores } from './routing-cluster.ts';

export const UPSTREAM_ID = '34010000002000000001';
export const UPSTREAM_DOMAIN = '3401000000';

export interface UpstreamRequest {
  readonly method: string;
  /** Local clock (Date.now()) at receipt. */
  readonly at: number;
  readonly fromPort: number;
  readonly request: SipRequest;
  readonly body: string;
}

export interface TestUpstream {
  readonly stack: SipStack;
  readonly port: number;
  readonly received: UpstreamRequest[];
  /** REGISTERs received from the instance whose SIP port is `sipPort`. */
  registersFrom(sipPort: number): UpstreamRequest[];
  close(): Promise<void>;
}

export async function startTestUpstream(): Promise<TestUpstream> {
  const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'], userAgent: 'test-upstream' });
  const received: UpstreamRequest[] = [];
  const record = (req: SipRequest, fromPort: number): void => {
    received.push({ method: req.method, at: Date.now(), fromPort, request: req, body: req.body.toString('utf8') });
  };
  stack.onRequest('REGISTER', (req, ctx) => {
    record(req, ctx.flow.remotePort);
    const expires = req.headers.get('Expires') ?? '3600';
    ctx.reply(200, { headers: { Expires: expires, Contact: req.headers.get('Contact') ?? '' } });
  });
  stack.onRequest('MESSAGE', (req, ctx) => {
    record(req, ctx.flow.remotePort);
    ctx.reply(200);
  });
  return {
    stack,
    port: stack.port,
    received,
    registersFrom: (sipPort) => received.filter((r) => r.method === 'REGISTER' && r.fromPort === sipPort),
    close: () => stack.close(),
  };
}

/**
 * A fresh database with the schema and one enabled upstream platform pointing at `upstream`; `edit`
 * runs on its platform repository (share channels…) before it is closed.
 */
export async function databaseWithPlatform(
  stores: Stores,
  name: string,
  upstream: TestUpstream,
  edit?: (repo: PlatformRepository) => Promise<void>,
): Promise<Stores> {
  const mysqlUrl = await stores.db.createDatabase(name);
  const pool = createMysqlPool(mysqlUrl, { connectionLimit: 1 });
  try {
    await migrate(pool, join(REPO_ROOT, 'deploy', 'sql'));
    const repo = createMysqlPlatformRepository(pool);
    await repo.upsert(upstreamPlatform({ serverId: UPSTREAM_ID, name: 'upper', host: '127.0.0.1', port: upstream.port, transport: 'udp', localId: SERVER_ID }));
    await edit?.(repo);
    await repo.close();
  } finally {
    await pool.end();
  }
  return { ...stores, mysqlUrl };
}
