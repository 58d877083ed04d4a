// The chaos table (issue #10 "Proof"): one row per scenario, whatever file ran it. Each test file runs in
// its own process (node --test), so rows go to a JSON-lines file in the directory the test runner gives
// (VMS_TEST_REPORT_DIR, scripts/run-tests.mjs), and the table is re-rendered beside it after every row;
// the runner prints it once, after the last file. Run without the runner, a file prints its own rows.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ChaosRow {
  readonly scenario: string;
  /** Upper bound on each request's answer time in this scenario, ms. */
  readonly boundMs: number;
  /** Requests answered within the bound. */
  readonly within: number;
  /** Requests answered past the bound or not at all: must be 0. */
  readonly late: number;
  /** Rows (devices, channels) present before the fault and missing after recovery: must be 0. */
  readonly rowsLost: number;
  /** Distinct cascade leaders the surviving instances name after convergence (1), null when not measured. */
  readonly leaders: number | null;
  /** Resident set size per process, MB, before and after the scenario. */
  readonly rss: readonly { readonly name: string; readonly beforeMb: number; readonly afterMb: number | null }[];
  readonly pass: boolean;
  /** Why it failed, or what else was measured. */
  readonly note: string;
}

const JSONL = 'chaos.jsonl';
/** The note column is cut here; the test's own failure message has it all. */
const NOTE_CHARS = 240;
const TABLE = 'chaos-table.txt';
const printed: ChaosRow[] = [];
let exitHook = false;

/** Records one row: in the runner's report directory, else printed when this process exits. */
export function recordRow(row: ChaosRow): void {
  const dir = process.env['VMS_TEST_REPORT_DIR'];
  if (dir !== undefined && dir !== '' && existsSync(dir)) {
    appendFileSync(join(dir, JSONL), `${JSON.stringify(row)}\n`);
    const rows = readFileSync(join(dir, JSONL), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ChaosRow);
    writeFileSync(join(dir, TABLE), renderTable(rows));
    return;
  }
  printed.push(row);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => process.stdout.write(renderTable(printed)));
  }
}

const rssCell = (r: ChaosRow): string =>
  r.rss.map((p) => `${p.name} ${p.beforeMb.toFixed(0)}→${p.afterMb === null ? 'dead' : p.afterMb.toFixed(0)}`).join(', ');

/** A fixed-width text table, the first line naming the columns. */
export function renderTable(rows: readonly ChaosRow[]): string {
  const head = ['scenario', 'bound ms', 'answered ≤ bound', 'past bound', 'rows lost', 'leaders', 'RSS MB before→after', 'result', 'note'];
  const body = rows.map((r) => [
    r.scenario,
    String(r.boundMs),
    String(r.within),
    String(r.late),
    String(r.rowsLost),
    r.leaders === null ? '-' : String(r.leaders),
    rssCell(r),
    r.pass ? 'PASS' : 'FAIL',
    r.note.length > NOTE_CHARS ? `${r.note.slice(0, NOTE_CHARS - 1)}…` : r.note,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join(' | ');
  const passed = rows.filter((r) => r.pass).length;
  return `\nchaos (issue #10): ${passed}/${rows.length} scenarios pass\n${line(head)}\n${widths.map((w, i) => '-'.repeat(i === widths.length - 1 ? 4 : w)).join('-+-')}\n${body.map(line).join('\n')}\n`;
}
