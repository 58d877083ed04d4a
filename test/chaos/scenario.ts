// One chaos scenario = one node:test test and one row of the chaos table. The scenario body measures and
// states its checks; the row is recorded whatever happens (a thrown set-up error is a failed row with the
// error as its note), and the test fails when any check failed, so a broken bound fails `npm test`.
import { readFileSync } from 'node:fs';
import { before, it } from 'node:test';
import { recordRow, type ChaosRow } from './report.ts';
import type { LoadResult } from './load.ts';

/** Resident set size of a process, MB, from /proc (Linux); null when it is gone. */
export function rssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Number(m[1]) / 1024;
  } catch {
    return null;
  }
}

export interface Tracked {
  readonly name: string;
  readonly pid: () => number | undefined;
}

export class ScenarioRun {
  /** Failed checks, each reason once with how often it failed. */
  readonly #failures = new Map<string, number>();
  readonly notes: string[] = [];
  within = 0;
  late = 0;
  rowsLost = 0;
  leaders: number | null = null;
  readonly #rss: { name: string; pid: () => number | undefined; beforeMb: number }[] = [];

  constructor(readonly boundMs: number) {}

  /** RSS of `processes` now; read again when the scenario ends. */
  track(processes: readonly Tracked[]): void {
    for (const p of processes) {
      const beforeMb = rssMb(p.pid());
      if (beforeMb !== null) this.#rss.push({ name: p.name, pid: p.pid, beforeMb }); // a process killed earlier has no row
    }
  }

  /** Records a check; a false one fails the row and the test, with `failure` as the reason. */
  check(ok: boolean, failure: string): void {
    if (!ok) this.#failures.set(failure, (this.#failures.get(failure) ?? 0) + 1);
  }

  get failed(): boolean {
    return this.#failures.size > 0;
  }

  /** The reasons, a repeated one once with its count. */
  get failures(): string[] {
    return [...this.#failures].map(([f, n]) => (n > 1 ? `${f} (×${n})` : f));
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** Adds a load's counts to the row: answers past the bound fail it. */
  addLoad(label: string, r: LoadResult): void {
    this.within += r.within;
    this.late += r.late;
    const codes = [...r.codes.entries()].sort((x, y) => y[1] - x[1]).map(([c, n]) => `${c}×${n}`).join(' ');
    this.note(`${label}: ${codes}, slowest ${r.slowestMs.toFixed(0)} ms`);
    this.check(r.late === 0, `${label}: ${r.late} answers past ${this.boundMs} ms (slowest ${r.slowestMs.toFixed(0)} ms)`);
    this.check(r.within > 0, `${label}: no request answered`);
  }

  row(scenario: string): ChaosRow {
    return {
      scenario,
      boundMs: this.boundMs,
      within: this.within,
      late: this.late,
      rowsLost: this.rowsLost,
      leaders: this.leaders,
      rss: this.#rss.map((p) => ({ name: p.name, beforeMb: p.beforeMb, afterMb: rssMb(p.pid()) })),
      pass: !this.failed,
      note: [...this.failures, ...this.notes].join('; '),
    };
  }
}

/** Scenarios declared in this file with their bounds, and those whose row was recorded. */
const declared = new Map<string, number>();
const recorded = new Set<string>();

/**
 * The file's set-up (stores, instances, devices): when it fails, node:test cancels the scenarios, so their
 * rows are recorded here as failed, naming the set-up error, and the table still has every row.
 */
export function chaosBefore(setUp: () => Promise<void>): void {
  before(async () => {
    try {
      await setUp();
    } catch (err) {
      for (const [name, boundMs] of declared) {
        if (recorded.has(name)) continue;
        const run = new ScenarioRun(boundMs);
        run.check(false, `set-up failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
        recorded.add(name);
        recordRow(run.row(name));
      }
      throw err;
    }
  });
}

/** Declares the scenario as a test; its row is recorded even when the body throws. */
export function chaosScenario(name: string, o: { boundMs: number; timeoutMs: number }, body: (run: ScenarioRun) => Promise<void>): void {
  declared.set(name, o.boundMs);
  it(name, { timeout: o.timeoutMs }, async () => {
    const run = new ScenarioRun(o.boundMs);
    try {
      await body(run);
    } catch (err) {
      run.check(false, `error: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      throw err;
    } finally {
      recorded.add(name);
      recordRow(run.row(name));
    }
    if (run.failed) throw new Error(`${name}: ${run.failures.join('; ')}`);
  });
}
