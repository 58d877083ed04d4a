// How long the event loop is blocked, in CPU time of the main thread rather than wall time.
//
// `monitorEventLoopDelay` measures wall time: on a machine whose cores are shared (this project's 2-core
// machine runs the suite, helpers and benchmarks together, load 15–25), a 10 ms piece of work is stretched
// to 100 ms by the scheduler, and the figure says more about the load than about the code. The CPU the main
// thread spends between two consecutive ticks of a 1 ms timer does not stretch: the timer phase runs once
// per loop iteration, so nothing else can run in between except that iteration's callbacks (and the
// microtasks they queue, and the garbage collection they cause). Its maximum is therefore an upper bound on
// the CPU of the longest uninterrupted block, whatever else the machine is doing.
//
// Linux only: the main thread's CPU comes from /proc/thread-self/schedstat (first field, nanoseconds on
// CPU), read with pread on a descriptor opened once (a few microseconds per read).
import { closeSync, openSync, readSync } from 'node:fs';

export interface MainThreadCpuMonitor {
  /** Longest main-thread CPU between two ticks so far, in milliseconds. */
  readonly maxMs: number;
  /** Ticks seen (a check that the monitor actually ran). */
  readonly ticks: number;
  stop(): void;
}

/** Must be called on the main thread (the thread whose blocks are measured). */
export function monitorMainThreadCpu(): MainThreadCpuMonitor {
  const fd = openSync('/proc/thread-self/schedstat', 'r');
  const buf = Buffer.alloc(96);
  const cpuNs = (): number => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.toString('latin1', 0, n);
    return Number(text.slice(0, text.indexOf(' ')));
  };
  let last = cpuNs();
  let maxNs = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = cpuNs();
    if (now - last > maxNs) maxNs = now - last;
    last = now;
    ticks++;
  }, 1);
  let stopped = false;
  return {
    get maxMs() {
      return maxNs / 1e6;
    },
    get ticks() {
      return ticks;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      closeSync(fd);
    },
  };
}
