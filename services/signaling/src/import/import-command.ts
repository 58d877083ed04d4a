// `npm run import -- devices.csv [--url URL] [--token T] [--concurrency N] [--config FILE]`: provisions
// every device of the file through the control API (POST /vms/devices, operator role), at most N
// requests in flight (default 8, at most 64), with a progress line on stderr (progress.ts) and a
// summary on stdout. A device the API refuses is reported with its line and the API's message, and
// the rest go on; a 503 or a network failure is retried twice after 0.5 s and 1 s. Exit 0 when every
// device was provisioned, 1 when some failed, 2 on bad usage or an unreadable file.
// The token: --token, else VMS_TOKEN, else an operator token signed with the configured key (as
// `npm run token -- --operator` does). The URL: --url, else http://127.0.0.1:<configured HTTP port>.
import { parseArgs } from 'node:util';
import type { ConfigIo } from '../config/load.ts';
import { resolveTarget } from './api-target.ts';
import { parseDeviceCsv, type DeviceCsvRow } from './device-csv.ts';
import { createProgress } from './progress.ts';

export interface ImportIo {
  readFile(path: string): Promise<string>;
  readonly fetch: typeof fetch;
  /** stderr: progress and problems. */
  err(text: string): void;
  readonly tty: boolean;
  now(): number;
  sleep(ms: number): Promise<void>;
  readonly config?: ConfigIo;
}

export interface ImportResult {
  readonly exitCode: number;
  /** The summary (stdout). */
  readonly stdout: string;
}

const USAGE = 'usage: npm run import -- FILE.csv [--url http://127.0.0.1:18080] [--token TOKEN] [--concurrency 8] [--config FILE]\n';
export const DEFAULT_CONCURRENCY = 8;
export const MAX_CONCURRENCY = 64;
const REQUEST_TIMEOUT_MS = 15_000;
const RETRY_DELAYS_MS = [500, 1000];
/** Problems printed one by one; past this only counted (a bad file must not flood the terminal). */
const MAX_REPORTED = 20;

/** `fatal`: the token was refused (401, or 403: this route's only refusal is the operator role), so every other row would be too. */
type Outcome = { ok: true; created: boolean } | { ok: false; problem: string; fatal: boolean };

export async function runImport(argv: readonly string[], env: NodeJS.ProcessEnv, io: ImportIo): Promise<ImportResult> {
  const usage = (message: string): ImportResult => {
    io.err(`${message}\n${USAGE}`);
    return { exitCode: 2, stdout: '' };
  };
  let values: { url?: string; token?: string; concurrency?: string; config?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: { url: { type: 'string' }, token: { type: 'string' }, concurrency: { type: 'string' }, config: { type: 'string' } },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    return usage((err as Error).message);
  }
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) return usage('one CSV file is required');
  const concurrency = values.concurrency === undefined ? DEFAULT_CONCURRENCY : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) return usage(`--concurrency must be 1-${MAX_CONCURRENCY}`);

  let text: string;
  try {
    text = await io.readFile(file);
  } catch (err) {
    return usage(`cannot read ${file}: ${(err as Error).message}`);
  }
  const csv = parseDeviceCsv(text);
  let reported = 0;
  const report = (line: number, problem: string): void => {
    if (reported++ < MAX_REPORTED) io.err(`${io.tty ? '\r\x1b[K' : ''}line ${line}: ${problem}\n`);
  };
  for (const p of csv.problems) report(p.line, p.problem);

  const target = await resolveTarget(values, env, io, 'bulk-import');
  if (typeof target === 'string') return usage(target);
  const { base, token } = target;

  const provision = async (row: DeviceCsvRow): Promise<Outcome> => {
    for (let attempt = 0; ; attempt++) {
      let retry: string;
      try {
        const res = await io.fetch(`${base}/vms/devices`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'blade-auth': `bearer ${token}` },
          body: JSON.stringify(row.body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const env = (await res.json().catch(() => null)) as { code?: number; success?: boolean; msg?: string; data?: { created?: boolean } } | null;
        if (env?.success === true) return { ok: true, created: env.data?.created === true };
        if (res.status !== 503) return { ok: false, problem: `${env?.msg ?? `HTTP ${res.status}`} (code ${env?.code ?? res.status})`, fatal: res.status === 401 || res.status === 403 };
        retry = `${env?.msg ?? 'unavailable'} (503)`;
      } catch (err) {
        retry = (err as Error).message;
      }
      const delay = RETRY_DELAYS_MS[attempt];
      if (delay === undefined) return { ok: false, problem: retry, fatal: false };
      await io.sleep(delay);
    }
  };

  const total = csv.rows.length;
  const started = io.now();
  const progress = createProgress({ label: 'importing devices', total, startedAt: started, tty: io.tty });
  let done = 0;
  let failed = csv.problems.length;
  let created = 0;
  let next = 0;
  let refusedAuth = false;
  const worker = async (): Promise<void> => {
    while (next < total && !refusedAuth) {
      const row = csv.rows[next++] as DeviceCsvRow;
      const outcome = await provision(row);
      done++;
      if (outcome.ok) {
        if (outcome.created) created++;
      } else {
        failed++;
        report(row.line, outcome.problem);
        if (outcome.fatal) refusedAuth = true; // stop at the first instead of reporting thousands
      }
      const line = progress.tick(done, failed, io.now());
      if (line !== null) io.err(line);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, total)) }, () => worker()));
  io.err(progress.finish(done, failed, io.now()));
  if (reported > MAX_REPORTED) io.err(`${reported - MAX_REPORTED} more problems not shown\n`);
  const seconds = ((io.now() - started) / 1000).toFixed(1);
  const skipped = total - done;
  const summary =
    `${done - (failed - csv.problems.length)} of ${total + csv.problems.length} devices provisioned (${created} new) in ${seconds} s` +
    `${failed > 0 ? `, ${failed} failed` : ''}${skipped > 0 ? `, ${skipped} not tried (the token was refused)` : ''}\n`;
  return { exitCode: failed > 0 || skipped > 0 ? 1 : 0, stdout: summary };
}
