// The one line each benchmark ends with, read by run-all.ts (`npm run bench`) for its summary table.
// Quick mode (`--quick`, or VMS_BENCH_QUICK=1) makes each bench finish in well under a minute or two
// with smaller counts; its figures are indicative, the recorded ones come from full runs
// (docs/benchmarks.md).

export interface BenchSummary {
  readonly bench: string;
  /** What was measured, in a few words. */
  readonly what: string;
  /** The figures of this run. */
  readonly figures: string;
  /** The target, or '' when the bench has none. */
  readonly target: string;
  /** Whether this run met the target; null when there is none. */
  readonly met: boolean | null;
}

export const SUMMARY_PREFIX = 'bench-summary: ';

export function isQuick(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): boolean {
  return argv.includes('--quick') || env['VMS_BENCH_QUICK'] === '1';
}

export function printSummary(s: BenchSummary): void {
  process.stdout.write(`\n${SUMMARY_PREFIX}${JSON.stringify(s)}\n`);
}

/** The summary a bench printed, from its whole output; undefined when it printed none. */
export function parseSummary(output: string): BenchSummary | undefined {
  const line = output.split('\n').reverse().find((l) => l.startsWith(SUMMARY_PREFIX));
  if (line === undefined) return undefined;
  try {
    const v = JSON.parse(line.slice(SUMMARY_PREFIX.length)) as Partial<BenchSummary>;
    if (typeof v.bench !== 'string' || typeof v.figures !== 'string') return undefined;
    return { bench: v.bench, what: v.what ?? '', figures: v.figures, target: v.target ?? '', met: v.met ?? null };
  } catch {
    return undefined;
  }
}
