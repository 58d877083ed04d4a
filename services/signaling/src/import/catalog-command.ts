// `npm run catalog-sync -- DEVICE_ID [--url URL] [--token T] [--config FILE] [--timeout-s 300]`: starts a
// catalog sync on the device's owner (POST /vms/device/catalog/sync, any instance routes it) and follows
// its progress (GET, every 0.5 s) until it ends: "catalog sync 1200/5000 (24%) · 850/s · eta 4s" on stderr,
// where 5000 is the SumNum the device announced. Summary on stdout; exit 0 when the whole catalog was
// stored, 1 when it failed, stopped early (partial) or did not end within --timeout-s, 2 on bad usage.
import { parseArgs } from 'node:util';
import type { ConfigIo } from '../config/load.ts';
import { resolveTarget } from './api-target.ts';
import { createProgress, type Progress } from './progress.ts';

export interface CatalogIo {
  readonly fetch: typeof fetch;
  err(text: string): void;
  readonly tty: boolean;
  now(): number;
  sleep(ms: number): Promise<void>;
  readonly config?: ConfigIo;
}

const USAGE = 'usage: npm run catalog-sync -- DEVICE_ID [--url http://127.0.0.1:18080] [--token TOKEN] [--timeout-s 300] [--config FILE]\n';
const POLL_MS = 500;
const REQUEST_TIMEOUT_MS = 15_000;
const DEFAULT_TIMEOUT_S = 300; // above the server's whole-answer bound (120 s): the sync ends first

interface SyncProgress {
  readonly state: 'idle' | 'running' | 'done' | 'failed';
  readonly total: number | null;
  readonly received: number;
  readonly partial: boolean;
  readonly error: string | null;
}

export async function runCatalogSync(argv: readonly string[], env: NodeJS.ProcessEnv, io: CatalogIo): Promise<{ exitCode: number; stdout: string }> {
  const usage = (message: string) => {
    io.err(`${message}\n${USAGE}`);
    return { exitCode: 2, stdout: '' };
  };
  let values: { url?: string; token?: string; config?: string; 'timeout-s'?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: { url: { type: 'string' }, token: { type: 'string' }, config: { type: 'string' }, 'timeout-s': { type: 'string' } },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    return usage((err as Error).message);
  }
  const deviceId = positionals[0];
  if (deviceId === undefined || positionals.length > 1 || !/^\d{20}$/.test(deviceId)) return usage('one 20-digit device id is required');
  const timeoutS = values['timeout-s'] === undefined ? DEFAULT_TIMEOUT_S : Number(values['timeout-s']);
  if (!Number.isInteger(timeoutS) || timeoutS < 1 || timeoutS > 3600) return usage('--timeout-s must be 1-3600');
  const target = await resolveTarget(values, env, io, 'catalog-sync');
  if (typeof target === 'string') return usage(target);

  const call = async (method: 'POST' | 'GET'): Promise<SyncProgress> => {
    const res = await io.fetch(`${target.base}/vms/device/catalog/sync?deviceId=${deviceId}`, {
      method,
      headers: { 'blade-auth': `bearer ${target.token}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const e = (await res.json().catch(() => null)) as { code?: number; success?: boolean; msg?: string; data?: SyncProgress } | null;
    if (e?.success !== true || e.data === undefined) throw new Error(`${e?.msg ?? `HTTP ${res.status}`} (code ${e?.code ?? res.status})`);
    return e.data;
  };

  const started = io.now();
  let p: SyncProgress;
  try {
    p = await call('POST');
  } catch (err) {
    io.err(`catalog sync of ${deviceId} refused: ${(err as Error).message}\n`);
    return { exitCode: 1, stdout: '' };
  }
  let progress: Progress | null = null;
  let waitingShown = false;
  while (p.state === 'running' && io.now() - started < timeoutS * 1000) {
    if (p.total === null) {
      if (!waitingShown) io.err(`catalog sync of ${deviceId}: waiting for the device's first answer\n`);
      waitingShown = true;
    } else {
      progress ??= createProgress({ label: 'catalog sync', total: p.total, startedAt: started, tty: io.tty });
      const line = progress.tick(p.received, 0, io.now());
      if (line !== null) io.err(line);
    }
    await io.sleep(POLL_MS);
    try {
      p = await call('GET');
    } catch (err) {
      io.err(`${io.tty ? '\r\x1b[K' : ''}progress unreadable: ${(err as Error).message}\n`); // e.g. the owner restarting: try again
    }
  }
  const seconds = ((io.now() - started) / 1000).toFixed(1);
  if (p.total !== null) io.err((progress ?? createProgress({ label: 'catalog sync', total: p.total, startedAt: started, tty: io.tty })).finish(p.received, 0, io.now()));
  if (p.state === 'running') return { exitCode: 1, stdout: `catalog sync of ${deviceId} still running after ${timeoutS} s: ${p.received} of ${p.total ?? '?'} channels so far\n` };
  if (p.state === 'failed') return { exitCode: 1, stdout: `catalog sync of ${deviceId} failed after ${seconds} s: ${p.error ?? 'no reason given'}\n` };
  const partial = p.partial ? ' (partial: the device stopped answering; the channels received were added)' : '';
  return { exitCode: p.partial ? 1 : 0, stdout: `catalog of ${deviceId}: ${p.received} of ${p.total ?? p.received} channels stored in ${seconds} s${partial}\n` };
}
