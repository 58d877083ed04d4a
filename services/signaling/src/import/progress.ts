// Progress of a long operation on a terminal or a log (bulk import, cluster demo start): one line
// "label done/total (pct) · failed · rate/s · eta". On a terminal the line is rewritten in place (\r)
// at most every `ttyIntervalMs`; into a file or a pipe a full line is written at most every
// `logIntervalMs`, so a log gets a few lines, not one per item. Pure: time is passed in.

export interface ProgressOptions {
  readonly label: string;
  readonly total: number;
  readonly startedAt: number;
  readonly tty: boolean;
  readonly ttyIntervalMs?: number;
  readonly logIntervalMs?: number;
}

export interface Progress {
  /** The text to write now (with \r or \n), or null when it is too soon since the last one. */
  tick(done: number, failed: number, now: number): string | null;
  /** The final line, always. */
  finish(done: number, failed: number, now: number): string;
}

export function formatProgress(label: string, done: number, total: number, failed: number, elapsedMs: number): string {
  const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
  const left = total - done;
  const eta = rate > 0 && left > 0 ? ` · eta ${formatSeconds(left / rate)}` : '';
  const fail = failed > 0 ? ` · ${failed} failed` : '';
  return `${label} ${done}/${total} (${pct}%)${fail} · ${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s${eta}`;
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;
}

export function createProgress(o: ProgressOptions): Progress {
  const interval = o.tty ? (o.ttyIntervalMs ?? 100) : (o.logIntervalMs ?? 2000);
  let last = -Infinity;
  const text = (done: number, failed: number, now: number) => formatProgress(o.label, done, o.total, failed, now - o.startedAt);
  return {
    tick(done, failed, now) {
      if (now - last < interval) return null;
      last = now;
      return o.tty ? `\r\x1b[K${text(done, failed, now)}` : `${text(done, failed, now)}\n`;
    },
    finish(done, failed, now) {
      return o.tty ? `\r\x1b[K${text(done, failed, now)}\n` : `${text(done, failed, now)}\n`;
    },
  };
}
