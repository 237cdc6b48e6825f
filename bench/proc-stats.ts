/**
 * CPU time and resident memory of a process, read from `/proc` (Linux): what the scale scenario
 * samples of the stack's servers and homeostat's processes, which the benchmark did not start itself
 * or cannot ask (a child busy with work still answers `/proc`).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second of `/proc/<pid>/stat`'s times (`getconf CLK_TCK`, 100 almost everywhere). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** User plus system CPU seconds in a `stat` line of `/proc/<pid>` or `/proc/<pid>/task/<tid>`. */
function statCpuSeconds(stat: string): number {
  // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}

/** User plus system CPU seconds `pid` has used so far (its own threads; children not included); NaN if it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of `pid` in bytes (`VmRSS`); NaN if it is gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** One thread's CPU so far. */
export interface ThreadCpu {
  /** The thread's name (`comm`: `MainThread`, `WorkerThread`, `V8Worker`, `tokio-runtime-w`…). */
  readonly name: string;
  readonly seconds: number;
}

/**
 * User plus system CPU seconds each live thread of `pid` has used so far, by thread id (empty if the
 * process is gone). Threads that ended are not listed: their CPU is only in {@link cpuSeconds}.
 */
export function threadCpuSeconds(pid: number): Map<number, ThreadCpu> {
  const threads = new Map<number, ThreadCpu>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      threads.set(Number(tid), { name, seconds: statCpuSeconds(stat) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}
