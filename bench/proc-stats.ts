/**
 * CPU time and resident memory of a process, read from `/proc` (Linux): what the scale scenario
 * samples of the stack's servers and homeostat's processes, which the benchmark did not start itself
 * or cannot ask (a child busy with work still answers `/proc`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

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

/** User plus system CPU seconds `pid` has used so far (its own threads; children not included); NaN if it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
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
