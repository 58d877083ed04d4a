// Where a node process's counted callgrind window went, read from per-thread dumps (valgrind
// `--separate-threads=yes`): how much of it V8 spent collecting garbage and compiling (the JIT). A window
// with much compiling is not yet the steady state (tier-up still going on); one with a mark-compact caught a
// collection the neighbouring windows may not. Used by edge-callgrind.ts and register-callgrind.ts.
//
// Threads (one dump file each): the main thread (the file ending `-01`) runs the JavaScript and the event
// loop; V8's platform workers (`PlatformWorkerThread`) run only V8's background jobs — optimizing compiles
// (TurboFan) and the collector's helpers (concurrent marking, parallel scavenging, sweeping, unmapping) —
// so a worker's instructions are the JIT's under a compile job, else the collector's. On the main thread the
// inclusive counts of the collector's and the compilers' entry points are taken (callgrind_annotate
// --inclusive=yes; these entry points do not call one another). Any other thread (tsx's module-loader
// thread, libuv's pool) is `other`.
import { spawnSync } from 'node:child_process';

/** Inclusive counts of a callgrind file's functions, by symbol (callgrind_annotate's `file:function` column). */
function inclusive(file: string): { total: number; of: (needle: string) => number } {
  const r = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`callgrind_annotate ${file} failed: ${r.stderr}`);
  let total = 0;
  const rows: [string, number][] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s*([\d,]+) /.exec(line);
    if (m === null) continue;
    const n = Number((m[1] as string).replaceAll(',', ''));
    if (line.includes('PROGRAM TOTALS')) total = n;
    else rows.push([line, n]);
  }
  // each function is listed once with its inclusive count; a needle may name several (a prefix)
  return { total, of: (needle) => rows.reduce((sum, [l, n]) => (l.includes(needle) ? sum + n : sum), 0) };
}

/** A V8 platform worker's root: everything such a thread runs. */
const WORKER_ROOT = ':node::(anonymous namespace)::PlatformWorkerThread(';
/** TurboFan's job, on a worker. */
const WORKER_JIT_ROOTS = [':v8::internal::compiler::PipelineCompilationJob::ExecuteJobImpl('];
/**
 * The compilers on the main thread: tiering decisions at budget interrupts (not the interrupt runtime call,
 * whose stack check may run an install or a collection), a TurboFan job's preparation and
 * install, lazy bytecode compiles, deoptimization.
 */
const MAIN_JIT_ROOTS = [
  ':v8::internal::TieringManager::OnInterruptTick(',
  ':v8::internal::Compiler::CompileOptimized(',
  ':v8::internal::OptimizingCompileDispatcher::InstallOptimizedFunctions(',
  ':v8::internal::Runtime_CompileLazy(',
  ':v8::internal::Runtime_NotifyDeoptimized(',
  ':v8::internal::Deoptimizer::New(',
  ':v8::internal::Deoptimizer::ComputeOutputFrames(',
];
/** The collector on the main thread: a collection, incremental marking's start and its steps between collections. */
const MAIN_GC_ROOTS = [':v8::internal::Heap::CollectGarbage(', ':v8::internal::Heap::StartIncrementalMarking(', ':v8::internal::IncrementalMarking::Step(', ':v8::internal::IncrementalMarking::AdvanceOnAllocation('];

export interface V8Shares {
  /** Instructions of all threads in the window. */
  readonly total: number;
  readonly gc: number;
  readonly jit: number;
  /** Threads neither main nor V8's workers (tsx's loader thread, libuv's pool). */
  readonly other: number;
  /** Threads that ran anything in the window. */
  readonly threads: number;
}

/** The window's split over `threadFiles` (one dump, one file per thread; the main thread's name ends `-01`). */
export function v8Shares(threadFiles: readonly string[]): V8Shares {
  let total = 0;
  let gc = 0;
  let jit = 0;
  let other = 0;
  let threads = 0;
  const sum = (c: ReturnType<typeof inclusive>, roots: readonly string[]): number => roots.reduce((s, root) => s + c.of(root), 0);
  for (const f of threadFiles) {
    const c = inclusive(f);
    if (c.total === 0) continue;
    threads++;
    total += c.total;
    if (/-0*1$/.test(f)) {
      jit += sum(c, MAIN_JIT_ROOTS);
      gc += sum(c, MAIN_GC_ROOTS);
    } else if (c.of(WORKER_ROOT) > 0) {
      const compiling = sum(c, WORKER_JIT_ROOTS);
      jit += compiling;
      gc += c.total - compiling;
    } else other += c.total;
  }
  return { total, gc, jit, other, threads };
}
