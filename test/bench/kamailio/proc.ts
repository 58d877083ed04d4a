// CPU and memory of a process and its direct children from /proc (proc(5)): the server's own work,
// whatever the wall clock does on a machine shared with other workloads.
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = 100; // Linux USER_HZ, the unit of /proc/<pid>/stat times

interface Stat {
  readonly ppid: number;
  /** utime + stime, seconds (all threads). */
  readonly cpu: number;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' '); // after "pid (comm) "
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / CLK_TCK };
  } catch {
    return undefined; // exited
  }
}

/** The pid and its direct children (Kamailio's workers are children of its main process). */
export function processTree(pid: number): number[] {
  const kids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if (stat(Number(name))?.ppid === pid) kids.push(Number(name));
  }
  return [pid, ...kids];
}

/** utime + stime of the pids, seconds. */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, p) => sum + (stat(p)?.cpu ?? 0), 0);
}

/** Sum of VmRSS of the pids, KiB. */
export function rssKiB(pids: readonly number[]): number {
  let sum = 0;
  for (const p of pids) {
    try {
      sum += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited
    }
  }
  return sum;
}
