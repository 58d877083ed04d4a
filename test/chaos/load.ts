// Control load for the chaos scenarios: a few workers sending control-API requests back to back (with a
// short pause, the machine is shared), each answer timed against the scenario's bound. A request nobody
// answers is given up after the bound plus a grace period and counted as late, like a late answer.
import { sleep } from '@vms/harness';

export interface ControlRequest {
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Groups the answers in `codes` (e.g. devices of a live owner vs of a dead one). */
  readonly label?: string;
}

export interface LoadResult {
  readonly within: number;
  readonly late: number;
  /** `[label ]HTTP status/envelope code` (or `no answer`, `refused`: both count as late) → count. */
  readonly codes: ReadonlyMap<string, number>;
  readonly slowestMs: number;
}

export interface LoadOptions {
  /** The i-th request; spread over targets and devices by the caller. */
  readonly next: (i: number) => ControlRequest;
  readonly boundMs: number;
  /** Parallel workers. Default 4. */
  readonly concurrency?: number;
  /** Pause of a worker between two requests, ms. Default 20. */
  readonly pauseMs?: number;
  /** How long past the bound a request is waited for before it is given up. Default 2000. */
  readonly graceMs?: number;
}

export interface RunningLoad {
  /** Stops sending, waits for the requests in flight, returns the counts. */
  stop(): Promise<LoadResult>;
  /** Counts so far. */
  snapshot(): LoadResult;
}

export function startLoad(o: LoadOptions): RunningLoad {
  const codes = new Map<string, number>();
  let within = 0;
  let late = 0;
  let slowestMs = 0;
  let seq = 0;
  let stopping = false;
  const count = (code: string): void => void codes.set(code, (codes.get(code) ?? 0) + 1);

  const one = async (): Promise<void> => {
    const req = o.next(seq++);
    const t0 = performance.now();
    let code: string;
    let answered = false;
    try {
      const res = await fetch(req.url, {
        method: req.method ?? 'GET',
        ...(req.headers === undefined ? {} : { headers: req.headers }),
        ...(req.body === undefined ? {} : { body: req.body }),
        signal: AbortSignal.timeout(o.boundMs + (o.graceMs ?? 2000)),
      });
      const text = await res.text();
      let envelope = '';
      try {
        envelope = `/${(JSON.parse(text) as { code?: unknown }).code as string}`;
      } catch {
        envelope = '/not-json';
      }
      code = `${res.status}${envelope}`;
      answered = true;
    } catch (err) {
      code = (err as { name?: string }).name === 'TimeoutError' ? 'no answer' : 'refused';
    }
    const ms = performance.now() - t0;
    slowestMs = Math.max(slowestMs, ms);
    count(req.label === undefined ? code : `${req.label} ${code}`);
    if (answered && ms <= o.boundMs) within++;
    else late++;
  };

  const worker = async (): Promise<void> => {
    while (!stopping) {
      await one();
      await sleep(o.pauseMs ?? 20);
    }
  };
  const workers = Array.from({ length: o.concurrency ?? 4 }, () => worker());
  const snapshot = (): LoadResult => ({ within, late, codes: new Map(codes), slowestMs });
  return {
    snapshot,
    async stop() {
      stopping = true;
      await Promise.all(workers);
      return snapshot();
    },
  };
}

/** The slowest answer of GET `url` polled every `everyMs` until stopped (a liveness probe under attack). */
export function watchHealth(url: string, boundMs: number, everyMs = 100): RunningLoad {
  return startLoad({ next: () => ({ url }), boundMs, concurrency: 1, pauseMs: everyMs });
}
