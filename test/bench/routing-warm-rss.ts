// What the kept-warm routing build thread costs while idle (issue #13; table-worker.ts `keepWarm`): the
// process's RSS before the thread, after its start alone (a warm-up of 0 rules: tsx, the engine's modules
// and the MySQL source's module loaded), and after its start and the default warm-up (WARMUP_RULES synthetic
// rules built and dropped), each settled for a second; the thread is ended between the cases and each case
// runs `--rounds` times (default 3), in alternation. With `node --expose-gc` this thread's heap is collected
// before each reading, so what moves is the build thread's memory (its heap is not collected from here).
// No database: the warm-up only imports the source's module.
// Run from the repository root: node --expose-gc --import tsx test/bench/routing-warm-rss.ts [--rounds N] [--quick: 1 round]
import { loadavg } from 'node:os';
import { createWorkerTableBuilder, mysqlVersionSource, WARMUP_RULES } from '@vms/routing';
import { isQuick, printSummary } from './summary.ts';

const i = process.argv.indexOf('--rounds');
const ROUNDS = i >= 0 ? Number(process.argv[i + 1]) : isQuick() ? 1 : 3;
const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1000));
const rss = (): number => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** RSS growth from a kept-warm thread with this warm-up, once started and settled. */
async function growth(warmupRules: number): Promise<number> {
  await settle();
  const before = rss();
  const builder = createWorkerTableBuilder({ source: mysqlVersionSource('mysql://unused@127.0.0.1:1/none'), keepWarm: true, warmupRules });
  const w = await builder.warm();
  if (w === undefined) throw new Error('the thread did not warm up');
  await settle();
  const after = rss();
  await builder.close();
  return after - before;
}

const load0 = loadavg()[0]!;
const started: number[] = [];
const warmed: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  started.push(await growth(0));
  warmed.push(await growth(WARMUP_RULES));
}
const gc = 'gc' in globalThis ? 'this thread collected before each reading' : 'run with --expose-gc for steadier figures';
console.log(`idle build thread, RSS growth per round (${gc}; load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}):`);
console.log(`  started, no warm-up:                 ${started.map(mb).join(', ')} (median ${mb(median(started))})`);
console.log(`  started + warm-up of ${WARMUP_RULES.toLocaleString('en-US')} rules: ${warmed.map(mb).join(', ')} (median ${mb(median(warmed))})`);
printSummary({
  bench: 'routing-warm-rss',
  what: 'RSS of the kept-warm routing build thread while idle',
  figures: `+${mb(median(warmed))} RSS (thread alone +${mb(median(started))}), median of ${ROUNDS}`,
  target: 'stated (one thread, bounded)',
  met: true,
});
